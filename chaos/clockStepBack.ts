/**
 * The clock step-back rows (docs/guarantees.md, promise 6). One holder takes
 * a lease and vanishes; the store's clock steps back 300 ms later; then
 * either nobody calls the lock until two TTLs after the grant (then
 * try-locks every 20 ms until one is granted), or a waiter that stood in
 * line before the step waits on. Every call goes in a history of its own
 * (its own lock, beside the suite's usual workload), from which the verdict
 * reads how long the lease outlived its TTL and checks the bound the docs
 * state:
 * - nobody calls: at most the time from the lease's last write to the first
 *   call after the step (that call moves the lease onto the stepped clock,
 *   its length from then);
 * - a waiter in line: about one TTL (the lock object calls at the lease's
 *   expected end; the library's waiting acquire polls at least every second).
 */
import { check } from "./checker";
import { History, type Op, type Outcome } from "./history";
import type { LockClient } from "./lockClients";
import { TTL_MS } from "./settings";
import { now, sleep } from "./time";

/** The lease's length, the step's delay after the grant, and the quiet time, as in the outside run that found the bound broken. */
export const STEP_TTL_MS = 2 * TTL_MS;
export const STEP_AFTER_MS = 300;
const QUIET_MS = 2 * STEP_TTL_MS;
const POLL_MS = 20;
/** What a waiter's measured overrun may exceed one TTL by: the object's timers and round trips on a busy machine. */
const WAITER_SLACK_MS = 500;

export interface StepBackRun {
  waiter: boolean;
  /** Suite time the step was made (undefined: it was not). */
  steppedAt?: number;
  /** Where a lock object keeps the line: whether the waiter was seen in it before the step. */
  waiterSeenInLine?: boolean;
  /** Suite time the scenario stopped waiting for the next grant. */
  endAt: number;
  history: History;
}

/** Runs the scenario on a lock of its own; `step` moves the store's clock(s) back and confirms it. */
export async function runStepBack(lock: LockClient, name: string, waiter: boolean, step: () => Promise<void>): Promise<StepBackRun> {
  const history = new History();
  const call = async (client: number, op: Op["op"], token: string | undefined, run: () => Promise<Outcome>) => {
    const invokedAt = now();
    const outcome = await run();
    history.record({ client, op, token: outcome.kind === "granted" ? outcome.token : token, invokedAt, completedAt: now(), outcome });
    return outcome;
  };
  const result: StepBackRun = { waiter, endAt: 0, history };
  const holder = await call(0, "acquire", undefined, () => lock.acquire(name, STEP_TTL_MS, 1000));
  if (holder.kind !== "granted") {
    result.endAt = now();
    return result;
  }
  const grantedAt = now();
  // The holder vanishes: it never calls again.
  let waiting: Promise<Outcome> | undefined;
  if (waiter) {
    await sleep(STEP_AFTER_MS / 3);
    waiting = call(1, "acquire", undefined, () => lock.acquire(name, STEP_TTL_MS, 4 * STEP_TTL_MS));
    if (lock.waiters) {
      while (!result.waiterSeenInLine && now() < grantedAt + STEP_AFTER_MS) {
        result.waiterSeenInLine = ((await lock.waiters(name)) ?? 0) > 0;
        if (!result.waiterSeenInLine) await sleep(10);
      }
    }
  }
  await sleep(Math.max(0, grantedAt + STEP_AFTER_MS - now()));
  result.steppedAt = now();
  await step();
  let next: Outcome | undefined;
  if (waiting) next = await waiting;
  else {
    await sleep(Math.max(0, grantedAt + QUIET_MS - now()));
    const deadline = now() + 2 * STEP_TTL_MS + 3000;
    while (now() < deadline) {
      next = await call(1, "acquire", undefined, () => lock.acquire(name, STEP_TTL_MS, 0));
      if (next.kind === "granted") break;
      await sleep(POLL_MS);
    }
  }
  result.endAt = now();
  if (next?.kind === "granted") await call(1, "release", next.token, () => lock.release(name, next.token));
  return result;
}

/**
 * What the scenario shows: its notes, and the promises it broke (the bound
 * exceeded, or a step that did not stretch the lease, which tests nothing).
 * Suite times throughout. With a waiter, the overrun runs from the holder's
 * acquire being sent (its lease cannot have begun earlier) to the waiter's
 * grant coming back. With nobody calling, the check needs no allowance: the
 * lease surely stood past its TTL until the last busy answer's send (counted
 * from the holder's grant coming back), and the bound is at most the first
 * call's answer less the holder's send; the first exceeding the second is a
 * broken bound whatever the machine's load.
 */
export function stepBackVerdict(s: StepBackRun): { notes: string[]; failures: string[] } {
  const failures: string[] = [];
  const granted = s.history.ops.filter((o) => o.op === "acquire" && o.outcome.kind === "granted").sort((a, b) => a.completedAt - b.completedAt);
  const [holder, next] = granted;
  if (holder?.outcome.kind !== "granted") return { notes: [], failures: ["the holder was never granted: nothing tested"] };
  if (s.steppedAt === undefined) return { notes: [], failures: ["the clock was not stepped back: nothing tested"] };
  const ttl = holder.outcome.ttlMs;
  const leaseEnd = holder.invokedAt + ttl;
  const r = check(s.history, []);
  if (r.overlaps || r.clientOverlaps) failures.push(`two holders at once: ${r.firstOverlap ?? "by the clients' view"}`);
  if (r.fenceBackwards || r.fenceRepeats) failures.push("the next grant's fence did not go up");
  if (s.waiter && s.waiterSeenInLine === false) failures.push("the waiter was not in the lock's line before the step: nothing tested");
  if (!next) {
    failures.push(`no grant within ${Math.round(s.endAt - leaseEnd)} ms past the lease's TTL: it outlived it by more than the bound`);
    return { notes: [], failures };
  }
  const overrun = next.completedAt - leaseEnd;
  const notes = [`a ${ttl} ms lease, the clock stepped back ${Math.round(s.steppedAt - holder.completedAt)} ms after its grant`];
  if (s.waiter) {
    notes.push(`the waiter in line before the step was granted ${Math.round(overrun)} ms past the lease's TTL (bound: about one TTL, ${ttl} ms)`);
    if (overrun > ttl + WAITER_SLACK_MS) failures.push(`the lease outlived its TTL by ${Math.round(overrun)} ms, more than one TTL (${ttl} ms)`);
    if (overrun < STEP_AFTER_MS / 2)
      failures.push(`the lease outlived its TTL by only ${Math.round(overrun)} ms: the step did not stretch it, nothing tested`);
    return { notes, failures };
  }
  const after = s.history.ops.filter((o) => o.client !== holder.client && o.invokedAt >= (s.steppedAt ?? 0));
  const first = after[0];
  const lastBusy = after.filter((o) => o.outcome.kind === "busy").at(-1);
  if (!first || !lastBusy || first.outcome.kind !== "busy" || first.invokedAt < holder.completedAt + ttl)
    return { notes, failures: [...failures, "the first call after the step did not find the lease standing past its TTL: nothing tested"] };
  const bound = first.completedAt - holder.invokedAt;
  const stood = lastBusy.invokedAt - (holder.completedAt + ttl);
  notes.push(
    `nobody called until ${Math.round(first.invokedAt - holder.completedAt)} ms after the grant; the lease outlived its TTL by ${Math.round(stood)}-${Math.round(overrun)} ms (last busy answer, next grant; bound: last write to first call after the step, at most ${Math.round(bound)} ms)`,
  );
  if (stood > bound)
    failures.push(
      `the lease outlived its TTL by at least ${Math.round(stood)} ms, more than the time from its last write to the first call after the step (${Math.round(bound)} ms)`,
    );
  return { notes, failures };
}
