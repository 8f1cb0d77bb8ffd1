/**
 * Expiry notifications are signed per namespace. Each namespace has its own
 * key, derived from the service's WEBHOOK_SECRET and the namespace's name
 * (`namespaceKey`; a tenant reads its own from `GET /v1/notifications/key`),
 * so one tenant's notifications can never pass for another's. The header:
 *
 *   x-lock-signature: t=<unix ms>,v1=<hex HMAC-SHA256(key, body)>,v2=<hex HMAC-SHA256(key, t + "." + body)>
 *
 * v2 covers the timestamp, so a captured delivery cannot be replayed with a
 * fresh `t`; receivers should check v2 and reject an old `t`
 * (`verifyNotification` does both). v1 is the contract's form and is kept
 * for receivers written against it. The body names the namespace.
 */
export const SIGNATURE_HEADER = "x-lock-signature";

/** How old a notification's `t` may be for verifyNotification by default. */
const DEFAULT_TOLERANCE_MS = 5 * 60_000;

const encoder = new TextEncoder();

async function hmacHex(key: string, message: string): Promise<string> {
  const k = await crypto.subtle.importKey("raw", encoder.encode(key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", k, encoder.encode(message)));
  return Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The namespace's signing key: hex HMAC-SHA256(WEBHOOK_SECRET, "holdfast notifications:" + namespace). */
export function namespaceKey(webhookSecret: string, namespace: string): Promise<string> {
  return hmacHex(webhookSecret, `holdfast notifications:${namespace}`);
}

export async function signatureHeader(key: string, body: string, now = Date.now()): Promise<string> {
  return `t=${now},v1=${await hmacHex(key, body)},v2=${await hmacHex(key, `${now}.${body}`)}`;
}

/** What an expiry notification says. */
export interface ExpiryNotification {
  kind: string;
  namespace: string;
  name: string;
  fence: number;
  /** The lease's end on the store's clock (epoch ms). */
  expiredAt: number;
  /** Kinds with many holders: which holder lapsed (holders of one epoch share a fence). */
  holder?: string;
  /** The signature's time (epoch ms). */
  t: number;
}

export interface VerifyOptions {
  /** The request body exactly as received (text, not re-serialized JSON). */
  body: string;
  /** The x-lock-signature header. */
  signature: string | null | undefined;
  /** The namespace's key (GET /v1/notifications/key). */
  key: string;
  /** Refuse a signature older (or further in the future) than this; default 5 minutes. */
  toleranceMs?: number;
  now?: number;
}

/**
 * Checks an expiry notification as a receiver must: a valid v2 signature
 * under the namespace's key, over `t` and the body, with `t` within the
 * tolerance. Answers the notification, or null when any check fails.
 * Deliveries are at least once: deduplicate by (namespace, name, fence,
 * holder).
 *
 *   const n = await verifyNotification({ body: await req.text(), signature: req.headers.get("x-lock-signature"), key });
 *   if (!n) return new Response("bad signature", { status: 401 });
 */
export async function verifyNotification(options: VerifyOptions): Promise<ExpiryNotification | null> {
  const fields = new Map<string, string>();
  for (const part of (options.signature ?? "").split(",")) {
    const eq = part.indexOf("=");
    if (eq > 0) fields.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  const t = Number(fields.get("t"));
  const v2 = fields.get("v2") ?? "";
  if (!Number.isSafeInteger(t) || !/^[0-9a-f]{64}$/.test(v2)) return null;
  const now = options.now ?? Date.now();
  if (Math.abs(now - t) > (options.toleranceMs ?? DEFAULT_TOLERANCE_MS)) return null;
  if (!equalHex(await hmacHex(options.key, `${t}.${options.body}`), v2)) return null;
  try {
    const parsed = JSON.parse(options.body) as Omit<ExpiryNotification, "t">;
    return { ...parsed, t };
  } catch {
    return null;
  }
}

/** Constant time over equal lengths: the comparison reveals nothing of where it differs. */
function equalHex(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
