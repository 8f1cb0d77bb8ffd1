import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";

/** The LockRoom of one mutex of tenant-a (KEY_A). */
export function mutexRoom(name: string) {
  return env.LOCK_ROOM.get(env.LOCK_ROOM.idFromName(`mutex:tenant-a:${name}`));
}

export function roomAlarm(name: string): Promise<number | null> {
  return runInDurableObject(mutexRoom(name), (_room, state) => state.storage.getAlarm());
}

/** Runs the room's alarm now, as the runtime would at its scheduled time. */
export function fireRoomAlarm(name: string): Promise<boolean> {
  return runDurableObjectAlarm(mutexRoom(name));
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
