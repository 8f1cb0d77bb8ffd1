import type { PendingNotification, Expiry } from "./expiryRecords.js";
import { namespaceKey, SIGNATURE_HEADER, signatureHeader } from "../../wire/signature.js";

/**
 * How long a lapsed-looking lease waits before its notification goes out:
 * on the Redis store a release lands a moment before the Worker tells the
 * lock object, and a notification for a lease that was in fact released
 * would be a lie.
 */
const RELEASE_GRACE_MS = 1000;
export const MAX_ATTEMPTS = 10;
const DELIVERY_TIMEOUT_MS = 5000;

/**
 * A short, non-secret id of a holder for its notifications: the first 16 hex
 * characters of SHA-256 of its token (never the token itself). Readers of a
 * read-write lock share a fence, so (name, fence) does not tell their lapses
 * apart; (name, fence, holder) does, and a holder can recognise its own.
 */
export async function holderIdOf(token: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token)));
  return Array.from(digest.subarray(0, 8), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** `holder`: the holder's id (holderIdOf), for the kinds with many holders (their expiries are by token). */
export function notificationFor(lease: Expiry, now: number, holder?: string): PendingNotification {
  const body = JSON.stringify({
    kind: lease.kind,
    namespace: lease.ns,
    name: lease.name,
    fence: lease.fence,
    ...(holder === undefined ? {} : { holder }),
    // "holder" is already the holder's id here (many-holder kinds), so its label travels as holderLabel.
    ...(lease.holderLabel === undefined ? {} : { holderLabel: lease.holderLabel }),
    expiredAt: lease.expiresAt,
  });
  return { url: lease.onExpire, ns: lease.ns, body, fence: lease.fence, attempts: 0, nextAt: now + RELEASE_GRACE_MS };
}

/** Exponential backoff with jitter: about 1 s, 2 s, 4 s ... capped at 10 minutes. */
export function retryDelayMs(attempts: number): number {
  const base = Math.min(600_000, 1000 * 2 ** (attempts - 1));
  return Math.round(base / 2 + Math.random() * (base / 2));
}

/** One delivery attempt, signed with the namespace's key; true when the receiver answered 2xx. */
export async function deliver(n: PendingNotification, webhookSecret: string): Promise<boolean> {
  try {
    const key = await namespaceKey(webhookSecret, n.ns ?? "");
    const res = await fetch(n.url, {
      method: "POST",
      headers: { "content-type": "application/json", [SIGNATURE_HEADER]: await signatureHeader(key, n.body) },
      body: n.body,
      // A redirect is not followed: it could lead past the onExpire checks (an internal address).
      redirect: "manual",
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}
