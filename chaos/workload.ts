/**
 * The clients: each takes the lock (waiting a little), writes to the fenced
 * resource a few times over its hold with one heartbeat in the middle, and
 * releases, over and over, recording every call in the history. A fault may
 * ask a holder to pause past its TTL (a long GC pause, a stopped VM): it then
 * writes on without knowing, as a real one would.
 */
import type { FencedResource } from "./fencedResource";
import type { History, Outcome } from "./history";
import type { LockClient } from "./lockClients";
import { now, sleep } from "./time";

export interface WorkloadOptions {
  clients: number;
  ttlMs: number;
  holdMs: number;
  writesPerHold: number;
  waitMs: number;
  /** How long client `i` should pause while holding, asked once per hold (0: none). */
  pauseWhileHolding?: (client: number) => number;
}

export async function runClients(
  lock: LockClient,
  name: string,
  resource: FencedResource,
  history: History,
  options: WorkloadOptions,
  until: () => boolean,
): Promise<void> {
  const call = async (client: number, op: "acquire" | "heartbeat" | "release", token: string | undefined, run: () => Promise<Outcome>) => {
    const invokedAt = now();
    const outcome = await run();
    const t = outcome.kind === "granted" ? outcome.token : token;
    history.record({ client, op, token: t, invokedAt, completedAt: now(), outcome });
    return outcome;
  };

  const loop = async (client: number) => {
    while (!until()) {
      const got = await call(client, "acquire", undefined, () => lock.acquire(name, options.ttlMs, options.waitMs));
      if (got.kind !== "granted") {
        await sleep(got.kind === "busy" ? 2 + Math.random() * 8 : 20 + Math.random() * 30);
        continue;
      }
      const step = options.holdMs / options.writesPerHold;
      for (let w = 0; w < options.writesPerHold; w++) {
        resource.write(client, got.fence, now());
        if (w === Math.floor(options.writesPerHold / 2))
          await call(client, "heartbeat", got.token, () => lock.heartbeat(name, got.token, options.ttlMs));
        await sleep(step);
      }
      const pause = options.pauseWhileHolding?.(client) ?? 0;
      if (pause > 0) {
        await sleep(pause);
        resource.write(client, got.fence, now()); // it does not know it paused
      }
      await call(client, "release", got.token, () => lock.release(name, got.token));
    }
  };
  await Promise.all(Array.from({ length: options.clients }, (_, i) => loop(i)));
}

/** Waiters that hang up: acquires with a long wait, aborted after 50-300 ms, until told to stop. Not in the history: they never hold. */
export async function runDisconnectingWaiters(lock: LockClient, name: string, ttlMs: number, until: () => boolean): Promise<number> {
  let sent = 0;
  const loop = async () => {
    while (!until()) {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50 + Math.random() * 250);
      sent++;
      await lock.acquire(name, ttlMs, 5000, controller.signal);
      await sleep(20);
    }
  };
  await Promise.all([loop(), loop(), loop()]);
  return sent;
}

/**
 * Socket waiters that go away: each waits on the Worker's wait socket and closes it after
 * 50-300 ms, or at once when it is offered a grant, which it never acknowledges. Until told to
 * stop. Not in the history: they never hold. Answers how many went, and how many after an offer.
 */
export async function runVanishingSocketWaiters(
  lock: LockClient,
  name: string,
  ttlMs: number,
  until: () => boolean,
): Promise<{ gone: number; offered: number }> {
  const counts = { gone: 0, offered: 0 };
  const waiter = lock.vanishingSocketWaiter;
  if (!waiter) return counts;
  const loop = async () => {
    while (!until()) {
      const { offered } = await waiter(name, ttlMs, 50 + Math.random() * 250);
      counts.gone++;
      if (offered) counts.offered++;
      await sleep(20);
    }
  };
  await Promise.all([loop(), loop(), loop()]);
  return counts;
}
