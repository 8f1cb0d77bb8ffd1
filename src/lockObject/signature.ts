/**
 * Expiry notifications are signed like this: header
 * `x-lock-signature: t=<unix ms>,v1=<hex HMAC-SHA256(secret, body)>`.
 * `verifySignature` is what a receiver runs (exported for apps and tests).
 */
async function hmacHex(secret: string, body: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(body)));
  return Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("");
}

export async function signatureHeader(secret: string, body: string, now = Date.now()): Promise<string> {
  return `t=${now},v1=${await hmacHex(secret, body)}`;
}

/** True when the header carries a valid v1 signature of body under secret. */
export async function verifySignature(secret: string, body: string, header: string | null): Promise<boolean> {
  const v1 = /(?:^|,)v1=([0-9a-f]{64})(?:,|$)/.exec(header ?? "")?.[1];
  if (!v1) return false;
  const expected = await hmacHex(secret, body);
  let diff = 0;
  for (let i = 0; i < expected.length; i++) diff |= expected.charCodeAt(i) ^ v1.charCodeAt(i);
  return diff === 0;
}
