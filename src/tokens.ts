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
