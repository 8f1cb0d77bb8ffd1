/**
 * Scoped tokens: short-lived keys a server hands to a browser (docs/API.md,
 * "Scoped tokens"). A token names its namespace, a name prefix, the
 * operations it allows and when it expires, signed with HMAC-SHA-256 under
 * one of the namespace's TOKEN_SECRETS:
 *
 *   hfs1.<base64url of {"ns","prefix","ops","exp"} as JSON>.<base64url of the MAC>
 *
 * The Worker checks it (src/http/access/scopedTokens.ts) and the SDK and library
 * sign one offline (signScopedToken) with the same code: WebCrypto only, so
 * it runs in Workers, browsers and Node 20+. Nothing secret is in the token;
 * anyone holding it can read its scope.
 */

/** What every scoped token starts with; no API key may (src/http/access/auth.ts refuses one that does). */
export const SCOPED_TOKEN_PREFIX = "hfs1.";

/** What a token may allow. Listing, the audit log, force release and minting tokens are never among them. */
export const TOKEN_OPERATIONS = ["acquire", "release", "heartbeat", "wait", "inspect"] as const;
export type TokenOperation = (typeof TOKEN_OPERATIONS)[number];

/** A token lives at most a day. */
export const SCOPED_TOKEN_MAX_TTL_MS = 86_400_000;
export const SCOPED_TOKEN_MIN_TTL_MS = 1000;

/** A secret is at least this long: a token's MAC would otherwise let its holder guess the secret offline. */
export const TOKEN_SECRET_MIN_CHARS = 32;

/** What a token allows. */
export interface ScopedTokenClaims {
  namespace: string;
  /** Every name it touches starts with this (1-200 of the name characters). */
  prefix: string;
  operations: TokenOperation[];
  /** Unix epoch ms, the Worker's clock. */
  expiresAt: number;
}

export interface SignScopedTokenOptions {
  /** One of the namespace's TOKEN_SECRETS (the first is the one to sign with). */
  secret: string;
  namespace: string;
  prefix: string;
  operations: TokenOperation[];
  /** 1 s .. 24 h. */
  ttlMs: number;
}

/** Domain separation: a MAC of a token can never be mistaken for any other MAC made with the same secret. */
const MAC_LABEL = "holdfast scoped token v1.";
const NAMESPACE = /^[A-Za-z0-9_-]{1,64}$/;
const PREFIX = /^[A-Za-z0-9._:@+=-]{1,200}$/;

/**
 * Signs a token offline, without asking the service: a server holding its
 * namespace's token secret mints one for a browser. The same checks as
 * POST /v1/tokens; throws a RangeError for anything it would refuse.
 */
export async function signScopedToken(options: SignScopedTokenOptions): Promise<{ token: string; expiresAt: number }> {
  const { ttlMs } = options;
  if (!Number.isInteger(ttlMs) || ttlMs < SCOPED_TOKEN_MIN_TTL_MS || ttlMs > SCOPED_TOKEN_MAX_TTL_MS) {
    throw new RangeError(`ttlMs must be an integer from ${SCOPED_TOKEN_MIN_TTL_MS} to ${SCOPED_TOKEN_MAX_TTL_MS} (24 h)`);
  }
  if ((options.secret ?? "").length < TOKEN_SECRET_MIN_CHARS) throw new RangeError(`a token secret is at least ${TOKEN_SECRET_MIN_CHARS} characters`);
  const expiresAt = Date.now() + ttlMs;
  const claims = { namespace: options.namespace, prefix: options.prefix, operations: options.operations, expiresAt };
  const problem = claimsProblem(claims);
  if (problem) throw new RangeError(problem);
  return { token: await signClaims(options.secret, claims), expiresAt };
}

/** Why these claims cannot be a token, or undefined. */
function claimsProblem(claims: ScopedTokenClaims): string | undefined {
  if (!NAMESPACE.test(claims.namespace)) return "namespace must be 1-64 of A-Z a-z 0-9 _ -";
  if (!PREFIX.test(claims.prefix)) return "prefix must be 1-200 of the name characters A-Z a-z 0-9 . _ : @ + = -";
  const ops = claims.operations;
  if (!Array.isArray(ops) || !ops.length || ops.some((op) => !TOKEN_OPERATIONS.includes(op))) {
    return `operations must be one or more of ${TOKEN_OPERATIONS.join(", ")}`;
  }
  if (!Number.isSafeInteger(claims.expiresAt)) return "expiresAt must be an integer (ms)";
  return undefined;
}

/** The token for these claims under `secret`, unchecked (the Worker's route and the tests check first). */
export async function signClaims(secret: string, claims: ScopedTokenClaims): Promise<string> {
  const payload = base64url(
    new TextEncoder().encode(JSON.stringify({ ns: claims.namespace, prefix: claims.prefix, ops: claims.operations, exp: claims.expiresAt })),
  );
  const mac = await crypto.subtle.sign("HMAC", await macKey(secret), new TextEncoder().encode(MAC_LABEL + payload));
  return `${SCOPED_TOKEN_PREFIX}${payload}.${base64url(new Uint8Array(mac))}`;
}

/**
 * The claims of a token whose MAC one of `secretsOf(namespace)` made, else
 * undefined (malformed, unknown namespace, bad signature). Expiry is the
 * caller's to check: an expired token is answered differently.
 */
export async function verifyScopedToken(token: string, secretsOf: (namespace: string) => readonly string[]): Promise<ScopedTokenClaims | undefined> {
  const [payload, mac, extra] = token.slice(SCOPED_TOKEN_PREFIX.length).split(".");
  if (!token.startsWith(SCOPED_TOKEN_PREFIX) || !payload || !mac || extra !== undefined) return undefined;
  let claims: ScopedTokenClaims;
  let macBytes: Uint8Array<ArrayBuffer>;
  try {
    const raw = JSON.parse(new TextDecoder().decode(fromBase64url(payload)));
    claims = { namespace: raw.ns, prefix: raw.prefix, operations: raw.ops, expiresAt: raw.exp };
    macBytes = fromBase64url(mac);
  } catch {
    return undefined;
  }
  if (typeof claims.namespace !== "string" || claimsProblem(claims)) return undefined;
  const signed = new TextEncoder().encode(MAC_LABEL + payload);
  // crypto.subtle.verify compares in constant time; a rotation lists two or three secrets at most.
  for (const secret of secretsOf(claims.namespace)) {
    if (await crypto.subtle.verify("HMAC", await macKey(secret), macBytes, signed)) return claims;
  }
  return undefined;
}

const macKeys = new Map<string, Promise<CryptoKey>>();

/** The HMAC key of a secret, imported once per secret (a Worker checks many tokens under one). */
function macKey(secret: string): Promise<CryptoKey> {
  let key = macKeys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
    if (macKeys.size > 64) macKeys.clear(); // secrets come from configuration: a handful, but never an unbounded map
    macKeys.set(secret, key);
  }
  return key;
}

function base64url(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64url(s: string): Uint8Array<ArrayBuffer> {
  if (!/^[A-Za-z0-9_-]*$/.test(s)) throw new SyntaxError("not base64url");
  const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
}
