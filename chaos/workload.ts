/**
 * The clients: each takes the lock (waiting a little; the grant claims the
 * real resources first, resources.ts), writes to the fenced resources a few
 * times over its hold with one heartbeat in the middle, and releases, over
 * and over, recording every call in the history. A fault may
 * ask a holder to pause past its TTL (a long GC pause, a stopped VM): it then
 * writes on without knowing, as a real one would, just as the next holder's
 * grant comes back.
 */
import type { ClaimOnGrant } from "../src/fence/index";
import type { FencedResource } from "./fencedResource";
import type { History, Outcome } from "./history";
import type { LockClient } from "./lockClients";
import type { Resources } from "./resources";
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

/**
 * Where the holders write: the real resources (claimed on every grant), and
 * the in-memory one, which no grant claims: what fencing without claim on
 * grant lets through, under the same history.
 */
export interface Targets {
  real: Resources;
  unclaimed: FencedResource;
}

export async function runClients(
  lock: LockClient,
  name: string,
  targets: Targets,
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
      const got = await call(client, "acquire", undefined, () =>
        lock.acquire(name, options.ttlMs, options.waitMs, undefined, targets.real.claimFor(name)),
      );
      if (got.kind !== "granted") {
        await sleep(got.kind === "busy" ? 2 + Math.random() * 8 : 20 + Math.random() * 30);
        continue;
      }
      const write = async () => {
        const at = now();
        targets.unclaimed.write(client, got.fence, at);
        await targets.real.write(name, client, got.fence, at);
      };
      const step = options.holdMs / options.writesPerHold;
      // Work first, then write, as a holder that reads before it writes: each hold begins with a
      // step in which only a claim tells the resources of its fence (the gap claim on grant closes).
      for (let w = 0; w < options.writesPerHold; w++) {
        await sleep(step);
        await write();
        if (w === Math.floor(options.writesPerHold / 2))
          await call(client, "heartbeat", got.token, () => lock.heartbeat(name, got.token, options.ttlMs));
      }
      const pause = options.pauseWhileHolding?.(client) ?? 0;
      if (pause > 0) {
        // It wakes the moment the next holder's grant comes back (its own lease over), or when the
        // pause ends, and writes before that holder's first write: Kleppmann's late write, in the one
        // window where only a claim has told the resource of the newer fence.
        await newerGrant(history, got.fence, now() + pause);
        await write(); // it does not know it paused
      }
      await call(client, "release", got.token, () => lock.release(name, got.token));
    }
  };
  await Promise.all(Array.from({ length: options.clients }, (_, i) => loop(i)));
}

/** Resolves as soon as a grant with a fence above `fence` comes back (from now on), or at `deadline`. */
async function newerGrant(history: History, fence: number, deadline: number): Promise<void> {
  const from = history.ops.length;
  const newer = () => history.ops.slice(from).some((o) => o.outcome.kind === "granted" && o.outcome.fence > fence);
  while (!newer() && now() < deadline) await sleep(1);
}

/** What the waiters that hang up did: outcomes that happened, not attempts. */
export interface HangUps {
  /** Waits their abort cut (the request ended by the abort, with no answer). */
  hungUp: number;
  /** Waiters granted before their abort could cut the wait: holders, recorded in the history. */
  grantedFirst: number;
}

/**
 * Waiters that hang up: acquires with a long wait, aborted after 50-300 ms, until told to stop.
 * One whose grant came back before its abort holds the lock like any client: it is recorded in
 * the history (clients 100 and up) and releases, so an overlap involving it is seen.
 */
export async function runDisconnectingWaiters(
  lock: LockClient,
  name: string,
  ttlMs: number,
  history: History,
  until: () => boolean,
  /** Claim on grant, as the workload's holders do: one granted first holds like them. */
  claim?: ClaimOnGrant,
): Promise<HangUps> {
  const counts: HangUps = { hungUp: 0, grantedFirst: 0 };
  const record = (client: number, op: "acquire" | "release", token: string | undefined, invokedAt: number, outcome: Outcome) =>
    history.record({ client, op, token, invokedAt, completedAt: now(), outcome });
  const loop = async (client: number) => {
    while (!until()) {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), 50 + Math.random() * 250);
      const invokedAt = now();
      const got = await lock.acquire(name, ttlMs, 5000, controller.signal, claim);
      clearTimeout(timer);
      if (got.kind === "granted") {
        counts.grantedFirst++;
        record(client, "acquire", got.token, invokedAt, got);
        const releaseAt = now();
        record(client, "release", got.token, releaseAt, await lock.release(name, got.token));
      } else if (got.kind === "error" && controller.signal.aborted) counts.hungUp++;
      await sleep(20);
    }
  };
  await Promise.all([loop(100), loop(101), loop(102)]);
  return counts;
}

/**
 * Socket waiters that go away: each waits on the Worker's wait socket and closes it after
 * 50-300 ms, or at once when it is offered a grant, which it never acknowledges. Until told to
 * stop. Not in the history: they never hold (a grant counts once acknowledged).
 */
export async function runVanishingSocketWaiters(lock: LockClient, name: string, ttlMs: number, until: () => boolean): Promise<SocketWaiterCounts> {
  const counts: SocketWaiterCounts = { opened: 0, gone: 0, offered: 0 };
  const waiter = lock.vanishingSocketWaiter;
  if (!waiter) return counts;
  const loop = async () => {
    while (!until()) {
      const { opened, went, offered } = await waiter(name, ttlMs, 50 + Math.random() * 250);
      if (opened) counts.opened++;
      // Only a socket that opened (so stood in the line) and then closed has gone away.
      if (went) counts.gone++;
      if (went && offered) counts.offered++;
      await sleep(20);
    }
  };
  await Promise.all([loop(), loop(), loop()]);
  return counts;
}

export interface SocketWaiterCounts {
  /** Sockets that opened (a socket that never opened never stood in the line). */
  opened: number;
  /** Of those, the ones whose close completed (the service answered our Close, or closed first). */
  gone: number;
  /** Of those, the ones offered a grant they never acknowledged. */
  offered: number;
}

/** What the socket waiters did, as the run's notes, and the suite's promises they broke. */
export function socketWaitersVerdict(c: SocketWaiterCounts): { notes: string[]; failures: string[] } {
  const failures: string[] = [];
  if (!c.gone) failures.push("no socket waiter opened and then went away: the fault did not happen");
  const unanswered = c.opened - c.gone;
  if (unanswered > 0)
    failures.push(`${unanswered} of ${c.opened} socket waiters' closes were never answered by the service (no Close frame back within 2 s)`);
  return {
    notes: [`${c.opened} socket waiters opened, ${c.gone} of them went away (close completed), ${c.offered} after a grant they never acknowledged`],
    failures,
  };
}
