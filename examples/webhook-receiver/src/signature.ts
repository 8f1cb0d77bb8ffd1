/**
 * Stripe-style webhook signatures: the sender puts
 * `Webhook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`
 * on each delivery. Signing the timestamp with the body means an old delivery
 * cannot be replayed by whoever captured it once the tolerance has passed.
 * WebCrypto only: runs in Workers, Node 20+ and browsers.
 */

/** How far a delivery's timestamp may be from now (Stripe's default). */
const TOLERANCE_SECONDS = 300;

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

export async function verifySignature(
  header: string | undefined,
  body: string,
  secret: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): Promise<SignatureCheck> {
  if (!header) return { ok: false, reason: "no signature header" };
  const parts = header.split(",").map((p) => p.trim().split("=", 2) as [string, string | undefined]);
  const t = parts.find(([k]) => k === "t")?.[1];
  // A sender rotating its secret signs with both: any v1 that matches will do.
  const signatures = parts.filter(([k, v]) => k === "v1" && v !== undefined && /^[0-9a-f]{64}$/.test(v)).map(([, v]) => v as string);
  if (!t || !/^\d+$/.test(t) || signatures.length === 0) return { ok: false, reason: "malformed signature header" };
  if (Math.abs(nowSeconds - Number(t)) > TOLERANCE_SECONDS) return { ok: false, reason: "timestamp outside the tolerance" };
  const key = await hmacKey(secret);
  const signed = new TextEncoder().encode(`${t}.${body}`);
  for (const hex of signatures) {
    // crypto.subtle.verify compares in constant time, unlike comparing hex strings.
    if (await crypto.subtle.verify("HMAC", key, fromHex(hex), signed)) return { ok: true };
  }
  return { ok: false, reason: "no signature matches" };
}

function hmacKey(secret: string): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
}

function fromHex(hex: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}
