import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { pollUntil } from "../pollUntil";

type ObjectKind = "mutex" | "idempotency" | "rwlock" | "semaphore";

/** The LockObject of one lock (a mutex by default) of tenant-a (KEY_A). */
export function lockObject(name: string, kind: ObjectKind = "mutex") {
  return env.LOCK_OBJECT.get(env.LOCK_OBJECT.idFromName(`${kind}:tenant-a:${name}`));
}

export function objectAlarm(name: string, kind: ObjectKind = "mutex"): Promise<number | null> {
  return runInDurableObject(lockObject(name, kind), (_o, state) => state.storage.getAlarm());
}

/** Runs the object's alarm now, as the runtime would at its scheduled time. */
export function fireObjectAlarm(name: string, kind: ObjectKind = "mutex"): Promise<boolean> {
  return runDurableObjectAlarm(lockObject(name, kind));
}

/**
 * Runs the object's alarms through a lapse and the notification grace that
 * follows; stops at an alarm further off than that (the Durable store's
 * clean-up of a kept record or fence).
 */
export async function runAlarmsUntilQuiet(name: string, kind: ObjectKind, rounds = 4): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    const next = await objectAlarm(name, kind);
    if (next === null || next - Date.now() > 5000) return;
    await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now()) + 20));
    await fireObjectAlarm(name, kind);
  }
}

/**
 * Polls a condition the test itself observes (not the system under test); throws with the last read when the time is
 * up (pollUntil). It returns as soon as the condition holds, so the default only bounds a wait that never ends: as
 * long as `until`'s (test/support/workerServers.ts), since on a busy machine a wait could take over 5 s to be in line.
 */
export function eventually<T>(read: () => T | Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  return pollUntil(read, ok, timeoutMs);
}

export async function newReceiver(failFirst = 0): Promise<{ id: string; url: string }> {
  const res = await fetch(`${env.TEST_RECEIVERS_URL}/receivers`, { method: "POST", body: JSON.stringify({ failFirst }) });
  return res.json();
}

export async function deliveries(id: string): Promise<Array<{ at: number; signature?: string; body: string; answered: number }>> {
  const res = await fetch(`${env.TEST_RECEIVERS_URL}/receivers/${id}`);
  return ((await res.json()) as { deliveries: any[] }).deliveries;
}

/** What a receiver computes to recognise a holder's notification: the first 16 hex characters of SHA-256 of its token. */
export async function holderIdOfToken(token: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token));
  return [...new Uint8Array(digest)]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("")
    .slice(0, 16);
}
