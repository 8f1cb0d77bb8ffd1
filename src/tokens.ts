/**
 * Owner tokens and request ids. Tokens carry 144 random bits; the "hf_"
 * prefix keeps them from ever parsing as JSON numbers (the Upstash client
 * JSON-parses string results by default).
 */
function randomBase64Url(bytes: number): string {
  const buf = crypto.getRandomValues(new Uint8Array(bytes));
  let s = "";
  for (const b of buf) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function newOwnerToken(): string {
  return `hf_${randomBase64Url(18)}`;
}

export function newRequestId(): string {
  return `rq_${randomBase64Url(12)}`;
}

/** An owner token derived from a secret and a message: the same inputs give the same token, in the same form as a random one. */
export async function tokenFromSecret(secret: string, message: string): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(message)));
  let s = "";
  for (const b of mac.subarray(0, 18)) s += String.fromCharCode(b);
  return `hf_${btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")}`;
}
