import type { MUTEX } from "./types.js";
import type { RedisKind } from "../../store/redis/RedisKinds.js";
import { watchStateOf } from "../../store/redis/watchStateOf.js";
import { leaseEndOf, markedIfWatched, okOrLost } from "../../store/redis/watchedResults.js";
import type { LockRef } from "../../store/types.js";
import { numberField, optionalNumberField, type ScriptReply, type ScriptRunner, unexpectedReply } from "../../store/redis/ScriptRunner.js";
import { type MutexKeys, mutexKeys } from "./keys.js";
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

/**
 * The mutex on the Redis store: one script (lua/mutex/<op>.lua) per operation, over one hash per mutex (keys.ts).
 * `keys` name that hash and its neighbours: an election keeps the same rules under keys of its own (src/kinds/election/).
 */
export function redisMutex(scripts: ScriptRunner, keys: MutexKeys = mutexKeys): MutexOps {
  return {
    async acquire(ref: LockRef, input: MutexAcquireInput): Promise<MutexAcquireResult> {
      const lock = keys.lock(ref);
      const fence = keys.legacyFence(lock);
      const r = await scripts.run(
        "mutex_acquire",
        // Only a re-entry reads its request key: a new or queued acquire's retry is recognised by its token.
        input.mode === "reenter" ? [lock, fence, keys.request(lock, input.requestId)] : [lock, fence],
        acquireArgs(input),
        keys.watchers(lock),
      );
      // A grant is always to the token sent (the script does not echo it).
      if (r.status === "granted") return markedIfWatched(r, { status: "granted", grant: grantOfReply(ref, r, "", input.token) });
      if (r.status === "busy") {
        const current = r.expiresAt === undefined ? undefined : { holder: r.holder || null, expiresAt: numberField(r, "expiresAt") };
        return {
          status: "busy",
          retryAfterMs: numberField(r, "retryAfterMs"),
          queued: r.queued === "1",
          ...(current ? { current } : {}),
          ...(r.delayedUntil ? { delayedUntil: numberField(r, "delayedUntil") } : {}),
        };
      }
      if (r.status === "lost") return { status: "lost" };
      throw unexpectedReply("mutex_acquire", r);
    },

    async heartbeat(ref, input): Promise<MutexHeartbeatResult> {
      const lock = keys.lock(ref);
      const r = await scripts.run("mutex_heartbeat", [lock], [input.token, input.ttlMs ?? ""], keys.watchers(lock));
      return okOrLost("mutex_heartbeat", r, () => ({ ...leaseEndOf(r), ...agreedFence(r) }));
    },

    async release(ref, input): Promise<MutexReleaseResult> {
      const lock = keys.lock(ref);
      const { force } = input;
      const request = keys.request(lock, input.requestId);
      // Two keys where nobody is expected to watch the lease (the library's); the full release (with the ended
      // set, and the watchers key from the Worker) when it says it needs them.
      let r = input.expectUnwatched && !force ? await scripts.run("mutex_release_unwatched", [lock, request], [input.token]) : undefined;
      if (!r || r.status === "defer") {
        const args = force ? ["", "force", force.fence === undefined ? "" : String(force.fence)] : [input.token];
        r = await scripts.run("mutex_release", [lock, request, keys.ended(lock), keys.legacyFence(lock)], args, keys.watchers(lock));
      }
      return okOrLost("mutex_release", r, () => ({
        released: r.released === "1",
        count: numberField(r, "count"),
        fence: numberField(r, "fence"),
        watched: r.watched === "1",
        ...agreedFence(r),
        ...(r.handedTo ? { handedTo: grantOfReply(ref, r, "handed", r.handedTo) } : {}),
        ...(force ? { holder: r.holder || null } : {}),
      }));
    },

    async withdraw(ref, input): Promise<MutexWithdrawResult> {
      const r = await scripts.run("mutex_withdraw", [keys.lock(ref)], [input.token, input.reason]);
      if (r.status === "revoked") return { status: "revoked", fence: numberField(r, "fence") };
      if (r.status === "unregistered" || r.status === "none") return { status: r.status };
      throw unexpectedReply("mutex_withdraw", r);
    },

    async watch(ref, { fence }) {
      const lock = keys.lock(ref);
      return watchStateOf("mutex_watch", await scripts.run("mutex_watch", [lock, keys.ended(lock)], [String(fence)]));
    },

    async inspect(ref): Promise<MutexState> {
      const lock = keys.lock(ref);
      const r = await scripts.run("mutex_inspect", [lock, keys.legacyFence(lock)], []);
      return {
        held: r.held === "1",
        fence: optionalNumberField(r, "fence"),
        count: numberField(r, "count"),
        ttlMs: numberField(r, "remainingMs"),
        expiresAt: optionalNumberField(r, "expiresAt"),
        holder: r.holder || null,
        delayedUntil: r.delayedUntil ? numberField(r, "delayedUntil") : null,
        ...agreedFence(r),
      };
    },
  };
}

/** mutex_acquire's ARGV[3..9] when left off (lua/mutex/acquire.lua). */
const ACQUIRE_ARG_DEFAULTS = [undefined, undefined, "new", "0", "0", "0", "", "0", "0"];

/**
 * mutex_acquire's ARGV, with the trailing ones that are their defaults left
 * off: each argument costs Redis about as much as a small command, and the
 * usual try-lock needs only its token and ttl.
 */
function acquireArgs(input: MutexAcquireInput): string[] {
  const args = [
    input.token,
    String(input.ttlMs),
    input.mode,
    input.watch ? "1" : "0",
    input.more ? "1" : "0",
    input.markPickup ? "1" : "0",
    input.holder ?? "",
    String(input.lockDelayMs ?? 0),
    input.history ? "1" : "0",
  ];
  while (args.length > 2 && args[args.length - 1] === ACQUIRE_ARG_DEFAULTS[args.length - 1]) args.pop();
  return args;
}

/** A grant to `token` from a reply: its own fields, or the handed-over waiter's (prefix "handed"). */
function grantOfReply(ref: LockRef, r: ScriptReply, prefix: "" | "handed", token: string): MutexGrant {
  const field = (name: string) => (prefix ? `${prefix}${name[0].toUpperCase()}${name.slice(1)}` : name);
  return {
    name: ref.name,
    token,
    fence: numberField(r, field("fence")),
    ttlMs: numberField(r, field("ttlMs")),
    expiresAt: numberField(r, field("expiresAt")),
    count: prefix ? 1 : numberField(r, "count"),
    ...(prefix ? {} : agreedFence(r)),
  };
}

/** A quorum database's agreed fence for the lease, when the reply carries one. */
function agreedFence(r: ScriptReply): { quorumFence?: number } {
  return r.quorumFence === undefined ? {} : { quorumFence: numberField(r, "quorumFence") };
}

/** The mutex on the Redis store: its scripts and keys (in the library's list of kinds and the Worker's). Its hash outlives the lease (with the last fence, and a lapse's lock-delay), so listing finds it by that alone. */
export const mutexOnRedis: RedisKind<typeof MUTEX> = {
  name: "mutex",
  redis: {
    ops: (scripts) => redisMutex(scripts),
    mainKey: mutexKeys.lock,
    watcherKey: (ref) => mutexKeys.watchers(mutexKeys.lock(ref)),
  },
};
