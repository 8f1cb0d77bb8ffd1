import { StoreUnavailableError } from "../../errors.js";
import { mutexKeys } from "./keys.js";
import type {
  MutexAcquireInput,
  MutexAcquireResult,
  MutexGrant,
  MutexHeartbeatResult,
  MutexReleaseResult,
  MutexState,
  MutexOps,
  MutexWithdrawResult,
} from "./types.js";
import { newRequestId } from "../../tokens.js";
import type { LockRef } from "../../store/types.js";
import type { ScriptRunner } from "../../store/redis/ScriptRunner.js";
import type { WatchState } from "../../store/types.js";
import { grantFence, leaseFence } from "./quorumFences.js";
import { gather, type NodeAnswer, noMajority, valuesOf } from "../../store/quorum/majority.js";
import type { QuorumKind } from "../../store/quorum/QuorumStore.js";
import { redisMutex } from "./redisMutex.js";

/** One Redis database of a quorum: its mutex operations and its script runner. */
interface QuorumNode {
  mutex: MutexOps;
  scripts: ScriptRunner;
}

/** Redlock's allowance for clocks running at different rates: 1 % of the TTL plus 2 ms. */
function driftMs(ttlMs: number): number {
  return Math.floor(ttlMs / 100) + 2;
}

/** How long a grant that could not be confirmed in time asks the caller to wait before trying again. */
const RETRY_AFTER_INVALID_MS = 50;

/**
 * The mutex over N independent Redis databases (Redlock): every operation
 * runs the single-database script on all of them at once, and a grant stands
 * only on a majority, confirmed within its validity (the TTL less the time
 * the acquire took and the drift allowance). See docs/guarantees.md.
 *
 * Fences: each database issues its own; the grant's is the largest of the
 * majority's, which a second step (lua/mutex/raise_fence.lua) writes back as the floor
 * of a majority, so any later grant (whose majority shares a database with
 * it) gets a larger one.
 */
function quorumMutex(nodes: QuorumNode[], now: () => number = Date.now): MutexOps {
  const n = nodes.length;
  const majority = Math.floor(n / 2) + 1;

  const count = <T>(answers: Array<NodeAnswer<T>>, test: (v: T) => boolean) => answers.filter((a) => a.ok && test(a.value)).length;
  const isOk = (r: { status: string }) => r.status === "ok";
  /** Waits for every node (a read, or a write whose every answer counts). */
  const hearAll = () => false;
  /** A majority can no longer say yes once more than n - majority answered otherwise. */
  const settles =
    <T>(test: (v: T) => boolean) =>
    (answers: Array<NodeAnswer<T>>) =>
      count(answers, test) >= majority || answers.length - count(answers, test) > n - majority;

  /** Releases wherever this token holds a level it should not (a grant short of a majority, or too late). */
  async function takeBack(ref: LockRef, token: string, where: number[]): Promise<void> {
    await Promise.all(where.map((i) => nodes[i].mutex.release(ref, { token, requestId: newRequestId() }).catch(() => undefined)));
  }

  /**
   * Makes `fence` the floor on every node, and the lease's agreed fence where
   * the token holds it (never lowering either). `raised` once a majority of
   * the databases hold the lock with it; `endsAt` is then when fewer than a
   * majority will still hold it by their own clocks (seen from ours, before
   * the drift allowance): a node may have answered with an older grant (a
   * retry's), whose lease began before this acquire did.
   */
  async function raiseFence(ref: LockRef, token: string, fence: number): Promise<{ raised: boolean; endsAt: number }> {
    const lock = mutexKeys.lock(ref);
    const sent = now();
    const g = await gather(
      n,
      (i) => nodes[i].scripts.run("mutex_raise_fence", [lock, mutexKeys.legacyFence(lock)], [token, fence]),
      settles((r) => r.held === "1"),
    );
    // Each held node's lease ends no sooner than `sent` plus what it said was left.
    const ends = valuesOf(g.answers)
      .filter((r) => r.held === "1")
      .map((r) => sent + Number(r.remainingMs))
      .sort((a, b) => b - a);
    return ends.length >= majority ? { raised: true, endsAt: ends[majority - 1] } : { raised: false, endsAt: sent };
  }

  /** The lease's end as the quorum may promise it: both bounds, less the drift allowance. */
  const promisedEnd = (started: number, ttlMs: number, endsAt: number) => Math.min(started + ttlMs, endsAt) - driftMs(ttlMs);

  /**
   * The grant a majority gave (a new lease, or a re-entry), with `fence`
   * raised on a majority and its promised end still ahead; no grant when
   * either fails (`raised` says whether the fence step reached a majority).
   */
  async function confirmed(
    ref: LockRef,
    input: MutexAcquireInput,
    started: number,
    fence: number,
    grants: MutexGrant[],
  ): Promise<{ grant?: MutexGrant; raised: boolean }> {
    const { raised, endsAt } = await raiseFence(ref, input.token, fence);
    const expiresAt = promisedEnd(started, input.ttlMs, endsAt);
    if (!raised || expiresAt <= now()) return { raised };
    const count = Math.max(...grants.map((x) => x.count));
    return { raised, grant: { name: ref.name, token: input.token, fence, ttlMs: input.ttlMs, expiresAt, count } };
  }

  /**
   * A re-entry, on a majority. Never given back: giving a level back where it
   * was taken while another node's answer is unknown would leave the nodes'
   * levels apart. One that does not settle is an outcome unknown, and the
   * client's retry (the same request id) replays it where it applied and
   * applies it where it did not. Never busy: re-entry answers granted or lost.
   */
  async function reentered(
    ref: LockRef,
    input: MutexAcquireInput,
    started: number,
    answers: Array<NodeAnswer<MutexAcquireResult> | undefined>,
    grants: MutexGrant[],
  ): Promise<MutexAcquireResult> {
    if (grants.length >= majority) {
      const { grant } = await confirmed(ref, input, started, leaseFence(grants), grants);
      if (grant) return { status: "granted", grant };
      throw new StoreUnavailableError(
        "mutex re-entry: not confirmed on a majority of the Redis databases in time; retry it with the same request id",
      );
    }
    if (valuesOf(answers).filter((r) => r.status === "lost").length > n - majority) return { status: "lost" };
    throw new StoreUnavailableError(
      `mutex re-entry: granted on ${grants.length} of ${n} Redis databases, a majority is ${majority}; retry it with the same request id`,
    );
  }

  return {
    async acquire(ref: LockRef, input: MutexAcquireInput): Promise<MutexAcquireResult> {
      const started = now();
      const isGrant = (r: MutexAcquireResult) => r.status === "granted";
      const g = await gather(n, (i) => nodes[i].mutex.acquire(ref, input), settles(isGrant));
      const grantedOn = g.answers.flatMap((a, i) => (a?.ok && a.value.status === "granted" ? [i] : []));
      const grants = grantedOn.map((i) => (g.answers[i] as { value: { grant: MutexGrant } }).value.grant);
      if (input.mode === "reenter") return reentered(ref, input, started, g.answers, grants);

      if (grants.length >= majority) {
        const { grant, raised } = await confirmed(ref, input, started, grantFence(grants), grants);
        if (grant) return { status: "granted", grant };
        // Not confirmed in time: a grant nobody may rely on, so give it back everywhere.
        const all = await g.all;
        await takeBack(ref, input.token, indexesWhere(all, isGrant));
        if (!raised) throw noMajority("the fence step of mutex acquire", all, majority);
        return { status: "busy", retryAfterMs: RETRY_AFTER_INVALID_MS, queued: false };
      }

      // No majority granted: give back what was granted (a late node's too), then say why.
      const all = await g.all;
      await takeBack(ref, input.token, indexesWhere(all, isGrant));
      const answered = valuesOf(all);
      if (answered.filter((r) => r.status === "lost").length >= majority) return { status: "lost" };
      if (answered.length < majority) throw noMajority("mutex acquire", all, majority);
      const busy = answered.flatMap((r) => (r.status === "busy" ? [r] : []));
      return {
        status: "busy",
        retryAfterMs: busy.length ? Math.min(...busy.map((r) => r.retryAfterMs)) : RETRY_AFTER_INVALID_MS,
        queued: busy.some((r) => r.queued),
      };
    },

    async heartbeat(ref, input): Promise<MutexHeartbeatResult> {
      // Every node's heartbeat extends from its own now (later than `started`): no older lease to allow for.
      const started = now();
      const g = await gather(n, (i) => nodes[i].mutex.heartbeat(ref, input), settles(isOk));
      const ok = valuesOf(g.answers).flatMap((r) => (r.status === "ok" ? [r] : []));
      if (ok.length >= majority) {
        const ttlMs = input.ttlMs ?? Math.min(...ok.map((r) => r.ttlMs));
        // An extension confirmed too late to be relied on is no extension.
        if (ttlMs - (now() - started) - driftMs(ttlMs) <= 0) return { status: "lost" };
        return { status: "ok", ttlMs, expiresAt: started + ttlMs - driftMs(ttlMs), fence: leaseFence(ok) };
      }
      if (valuesOf(g.answers).filter((r) => r.status === "lost").length > n - majority) return { status: "lost" };
      throw noMajority("mutex heartbeat", g.answers, majority);
    },

    async release(ref, input): Promise<MutexReleaseResult> {
      const started = now();
      const g = await gather(n, (i) => nodes[i].mutex.release(ref, input), settles(isOk));
      let ok = valuesOf(g.answers).flatMap((r) => (r.status === "ok" ? [r] : []));
      if (ok.length < majority) {
        if (valuesOf(g.answers).filter((r) => r.status === "lost").length > n - majority) return { status: "lost" };
        throw noMajority("mutex release", g.answers, majority);
      }
      // Re-entry levels can differ after a partial failure: when the answers so far
      // disagree, hear every node, and call it free only where a majority freed it.
      if (ok.some((r) => r.released) && ok.some((r) => !r.released)) {
        ok = valuesOf(await g.all).flatMap((r) => (r.status === "ok" ? [r] : []));
      }
      const released = ok.filter((r) => r.released).length >= majority;
      const result: MutexReleaseResult = {
        status: "ok",
        released,
        count: released ? 0 : Math.max(...ok.map((r) => r.count)),
        fence: leaseFence(ok),
        watched: ok.some((r) => r.watched),
      };
      // A handoff stands when a majority handed to the same waiter; otherwise the
      // lock object asks for its head again, which the nodes that did hand over
      // answer with that same grant.
      const handed = ok.flatMap((r) => (r.handedTo ? [r.handedTo] : []));
      const to = handed[0]?.token;
      const same = handed.filter((h) => h.token === to);
      if (to !== undefined && same.length >= majority) {
        const fence = Math.max(...same.map((h) => h.fence));
        const ttlMs = same[0].ttlMs;
        // A remembered release (a retry) answers with a handoff made earlier: raise's endsAt allows for it.
        const { raised, endsAt } = await raiseFence(ref, to, fence);
        const expiresAt = promisedEnd(started, ttlMs, endsAt);
        if (raised && expiresAt > now()) result.handedTo = { name: ref.name, token: to, fence, ttlMs, expiresAt, count: 1 };
      }
      return result;
    },

    async withdraw(ref, input): Promise<MutexWithdrawResult> {
      const g = await gather(n, (i) => nodes[i].mutex.withdraw(ref, input), hearAll);
      const answered = valuesOf(g.answers);
      if (answered.length < majority) throw noMajority("mutex withdraw", g.answers, majority);
      const revoked = answered.flatMap((r) => (r.status === "revoked" ? [r.fence] : []));
      if (revoked.length) return { status: "revoked", fence: Math.max(...revoked) };
      return { status: answered.some((r) => r.status === "unregistered") ? "unregistered" : "none" };
    },

    async watch(ref, lease): Promise<WatchState> {
      const g = await gather(n, (i) => nodes[i].mutex.watch(ref, lease), hearAll);
      const answered = valuesOf(g.answers);
      // Released on purpose anywhere: the holder ended it, nothing to report.
      if (answered.some((s) => s.state === "ended")) return { state: "ended" };
      const held = answered.flatMap((s) => (s.state === "held" ? [s] : []));
      if (held.length >= majority) {
        const soonest = held.reduce((a, b) => (a.remainingMs <= b.remainingMs ? a : b));
        return { state: "held", remainingMs: soonest.remainingMs, expiresAt: soonest.expiresAt };
      }
      if (answered.filter((s) => s.state === "lapsed").length > n - majority) return { state: "lapsed" };
      throw noMajority("mutex watch", g.answers, majority);
    },

    async inspect(ref): Promise<MutexState> {
      const g = await gather(n, (i) => nodes[i].mutex.inspect(ref), hearAll);
      const answered = valuesOf(g.answers);
      if (answered.length < majority) throw noMajority("mutex inspect", g.answers, majority);
      const held = answered.filter((s) => s.held);
      if (held.length < majority) {
        const fences = answered.flatMap((s) => (s.fence === null ? [] : [s.fence]));
        const delays = answered.flatMap((s) => (s.delayedUntil === null ? [] : [s.delayedUntil]));
        return {
          held: false,
          fence: fences.length ? Math.max(...fences) : null,
          count: 0,
          ttlMs: 0,
          expiresAt: null,
          holder: null,
          delayedUntil: delays.length ? Math.max(...delays) : null,
        };
      }
      const soonest = held.reduce((a, b) => (a.ttlMs <= b.ttlMs ? a : b));
      return {
        held: true,
        fence: leaseFence(held as Array<{ fence: number }>),
        count: Math.max(...held.map((s) => s.count)),
        ttlMs: soonest.ttlMs,
        expiresAt: soonest.expiresAt,
        holder: soonest.holder,
        delayedUntil: null,
      };
    },
  };
}

function indexesWhere<T>(answers: Array<NodeAnswer<T>>, test: (v: T) => boolean): number[] {
  return answers.flatMap((a, i) => (a.ok && test(a.value) ? [i] : []));
}

/**
 * The mutex on a quorum (src/store/quorum/QuorumStore.ts): its single-database operations on each, joined by majority.
 * The only kind a quorum offers (docs/guarantees.md says why the others are not).
 */
export const mutexOnQuorum: QuorumKind<"mutex", MutexOps> = {
  name: "mutex",
  quorum: { ops: (databases) => quorumMutex(databases.map((scripts) => ({ mutex: redisMutex(scripts), scripts }))) },
};
