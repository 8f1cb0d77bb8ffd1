// holdfast/client's watch (docs/API.md, "Watching a lock"): the Worker served by workerd over real TCP, on both
// stores, the client's real WebSocket; each change made through the service is pushed to the watch.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { HoldfastClient, type LockState } from "../../src/client/index";
import { type Stores, startOnBothStores, stopAll } from "../support/workerServers";

const KEY = "watch-client-key-123456";
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

let servers: Stores;

beforeAll(async () => {
  servers = await startOnBothStores({ API_KEYS: `watchers=${KEY}` }, { url: inject("upstashUrl"), token: inject("upstashToken") });
}, 120_000);

afterAll(async () => {
  await stopAll(servers ?? {});
});

/** The next state from the watch that matches, within a deadline (the pushes are awaited, never slept for). */
async function nextState(states: AsyncIterator<LockState>, match: (s: LockState) => boolean, what: string): Promise<LockState> {
  const deadline = Date.now() + 3000;
  for (;;) {
    const left = deadline - Date.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const step = await Promise.race([
      states.next(),
      new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), Math.max(0, left));
      }),
    ]);
    clearTimeout(timer);
    if (step === "late") throw new Error(`no state ${what} pushed within 3 s`);
    if (step.done) throw new Error(`the watch ended before a state ${what}`);
    if (match(step.value)) return step.value;
  }
}

describe.each(["redis", "durable"] as const)("client.watch (%s store)", (store) => {
  it("iterates the lock's states as a lease is taken and released, and ends on close()", async () => {
    const client = new HoldfastClient({ baseUrl: servers[store].url, apiKey: KEY });
    const name = unique("sdk-watch");
    const seen: LockState[] = [];
    const watch = client.watch("mutex", name, (s) => seen.push(s));
    const states = watch[Symbol.asyncIterator]();
    expect(await nextState(states, (s) => s.held === false, "free")).toMatchObject({ name, held: false, waiters: 0 });
    const lease = await client.lock(name, { ttlMs: 10_000, holder: "sdk <watcher>" });
    expect(await nextState(states, (s) => s.held === true, "held")).toMatchObject({ holder: "sdk <watcher>", fence: lease.fence });
    await lease.release();
    await nextState(states, (s) => s.held === false, "free again");
    watch.close();
    expect(await states.next()).toEqual({ done: true, value: undefined });
    expect(seen.map((s) => s.held)).toEqual([false, true, false]);
  });

  it("ends with the typed error a refused handshake hides (a bad name)", async () => {
    const client = new HoldfastClient({ baseUrl: servers[store].url, apiKey: KEY });
    const watch = client.watch("semaphore", "not a valid name");
    await expect(watch[Symbol.asyncIterator]().next()).rejects.toMatchObject({ code: "invalid_name" });
  });
});
