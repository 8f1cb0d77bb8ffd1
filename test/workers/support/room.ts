import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";

type RoomKind = "mutex" | "idempotency";

/** The LockRoom of one mutex (or idempotency key) of tenant-a (KEY_A). */
export function lockRoom(name: string, kind: RoomKind = "mutex") {
  return env.LOCK_ROOM.get(env.LOCK_ROOM.idFromName(`${kind}:tenant-a:${name}`));
}

export function roomAlarm(name: string, kind: RoomKind = "mutex"): Promise<number | null> {
  return runInDurableObject(lockRoom(name, kind), (_room, state) => state.storage.getAlarm());
}

/** Runs the room's alarm now, as the runtime would at its scheduled time. */
export function fireRoomAlarm(name: string, kind: RoomKind = "mutex"): Promise<boolean> {
  return runDurableObjectAlarm(lockRoom(name, kind));
}

/** Runs the room's alarms through a lapse and the notification grace that follows. */
export async function runAlarmsUntilQuiet(name: string, kind: RoomKind, rounds = 3): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    const next = await roomAlarm(name, kind);
    if (next === null) return;
    await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now()) + 20));
    await fireRoomAlarm(name, kind);
  }
}

/** Polls a condition the test itself observes (not the system under test). */
export async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 5000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function newReceiver(failFirst = 0): Promise<{ id: string; url: string }> {
  const res = await fetch(`${env.TEST_RECEIVERS_URL}/receivers`, { method: "POST", body: JSON.stringify({ failFirst }) });
  return res.json();
}

export async function deliveries(id: string): Promise<Array<{ at: number; signature?: string; body: string; answered: number }>> {
  const res = await fetch(`${env.TEST_RECEIVERS_URL}/receivers/${id}`);
  return ((await res.json()) as { deliveries: any[] }).deliveries;
}
