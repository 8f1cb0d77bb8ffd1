/**
 * Owner tokens and request ids. Tokens carry 144 random bits; the "hf_"
 * prefix keeps them from ever parsing as JSON numbers (the Upstash client
 * JSON-parses string results by default).
 *
 * Random bytes are drawn from a pool refilled 4 KiB at a time: one
 * getRandomValues call per ~100 acquires instead of two or three per
 * acquire, which showed as the largest single cost of a library cycle
 * (the same CSPRNG; Node's randomUUID pools the same way). Filled on first
 * use, never at module load (Workers refuse randomness outside a request).
 */
const POOL_BYTES = 4096;
let pool: Uint8Array | undefined;
let used = POOL_BYTES;

const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** `bytes` (a multiple of 3) random bytes as unpadded base64url. */
function randomBase64Url(bytes: number): string {
  if (bytes % 3 !== 0 || bytes > POOL_BYTES) throw new RangeError("randomBase64Url: bytes must be a multiple of 3 within the pool");
  if (!pool || used + bytes > POOL_BYTES) {
    pool = crypto.getRandomValues(new Uint8Array(POOL_BYTES));
    used = 0;
  }
  let s = "";
  for (let i = used; i < used + bytes; i += 3) {
    const n = (pool[i] << 16) | (pool[i + 1] << 8) | pool[i + 2];
    s += BASE64URL[n >> 18] + BASE64URL[(n >> 12) & 63] + BASE64URL[(n >> 6) & 63] + BASE64URL[n & 63];
  }
  used += bytes;
  return s;
}

export function newOwnerToken(): string {
  return `hf_${randomBase64Url(18)}`;
}

export function newRequestId(): string {
  return `rq_${randomBase64Url(12)}`;
}

const encoder = new TextEncoder();
const hmacKeys = new Map<string, Promise<CryptoKey>>();

/**
 * The HMAC key of a secret, imported once per secret: the import cost more
 * than the signature itself (~8 us against ~3 us), and a Worker signs many
 * request ids under the same few keys.
 */
function hmacKey(secret: string): Promise<CryptoKey> {
  let key = hmacKeys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    // The secrets are callers' keys (or scoped tokens): a handful at a time, but never an unbounded map.
    if (hmacKeys.size >= 64) hmacKeys.clear();
    hmacKeys.set(secret, key);
  }
  return key;
}

/** An owner token derived from a secret and a message: the same inputs give the same token, in the same form as a random one. */
export async function tokenFromSecret(secret: string, message: string): Promise<string> {
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", await hmacKey(secret), encoder.encode(message)));
  let s = "";
  for (const b of mac.subarray(0, 18)) s += String.fromCharCode(b);
  return `hf_${btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")}`;
}
