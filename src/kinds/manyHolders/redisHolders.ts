import type { CurrentHolder } from "../../errors.js";
import { InternalError } from "../../errors.js";
import { numberField, optionalNumberField, type ScriptReply, type ScriptRunner, unexpectedReply } from "../../store/redis/ScriptRunner.js";
import type { RedisKind } from "../../store/redis/RedisKinds.js";
import type { KindKey, KindName, OpsOf } from "../../store/kinds.js";
import { watchStateOf } from "../../store/redis/watchStateOf.js";
import { leaseEndOf, markedIfWatched, okOrLost } from "../../store/redis/watchedResults.js";
import type { WatchState } from "../../store/types.js";
import type { WithdrawReason } from "../../store/types.js";
import type { HolderKeys } from "./keys.js";
import type { LockRef } from "../../store/types.js";
import type {
  Admitted,
  HolderForceInput,
  HolderForceResult,
  HolderHeartbeatResult,
  HolderLeaseInput,
  HolderOps,
  HolderWithdrawResult,
  OwnOps,
  QueuedHolder,
} from "./types.js";

/** The scripts every many-holder kind shares (lua/holders/*.lua), on that kind's keys. */
function redisHolders(scripts: ScriptRunner) {
  return {
    async heartbeat(k: HolderKeys, input: { token: string; ttlMs?: number }): Promise<HolderHeartbeatResult> {
      const r = await scripts.run("holders_heartbeat", [k.lock], [input.token, input.ttlMs ?? ""], k.watchers);
      return okOrLost("holders_heartbeat", r, () => leaseEndOf(r));
    },

    async withdraw(k: HolderKeys, input: { token: string; reason: WithdrawReason }): Promise<HolderWithdrawResult> {
      const r = await scripts.run("holders_withdraw", [k.lock, k.gate], [input.token, input.reason]);
      if (r.status === "revoked") return { status: "revoked", fence: numberField(r, "fence") };
      if (r.status === "unregistered" || r.status === "none") return { status: r.status };
      throw unexpectedReply("holders_withdraw", r);
    },

    async ungate(k: HolderKeys): Promise<void> {
      const r = await scripts.run("holders_ungate", [k.gate], []);
      if (r.status !== "ok") throw unexpectedReply("holders_ungate", r);
    },

    async forceRelease(k: HolderKeys, input: HolderForceInput): Promise<HolderForceResult> {
      const which = input.holder === undefined ? ["all", ""] : ["label", input.holder];
      const r = await scripts.run("holders_force_release", [k.lock, k.request(input.requestId), k.ended, k.gate], which, k.watchers);
      return okOrLost("holders_force_release", r, () => ({
        released: numberField(r, "released"),
        fence: numberField(r, "fence"),
        holder: r.holder || null,
        endedTokens: listField(r, "ended").map((t) => String(t)),
        waiters: r.waiters === "1",
      }));
    },

    async watch(k: HolderKeys, token: string): Promise<WatchState> {
      return watchStateOf("holders_watch", await scripts.run("holders_watch", [k.lock, k.ended], [token]));
    },
  };
}

/** A JSON list field of a reply (cjson writes an empty list as {}). */
function listField(reply: ScriptReply, field: string): Array<Record<string, unknown>> {
  let v: unknown;
  try {
    v = JSON.parse(reply[field] ?? "");
  } catch {
    throw new InternalError(`expected a JSON list in field ${field} of ${JSON.stringify(reply).slice(0, 200)}`);
  }
  if (Array.isArray(v)) return v as Array<Record<string, unknown>>;
  if (v && typeof v === "object" && Object.keys(v).length === 0) return [];
  throw new InternalError(`expected a JSON list in field ${field} of ${JSON.stringify(reply).slice(0, 200)}`);
}

/** A busy answer's holder in the way (label and lease end), when the script named one. */
function currentOf(reply: ScriptReply): { current?: CurrentHolder } {
  if (reply.expiresAt === undefined) return {};
  return { current: { holder: reply.holder || null, expiresAt: numberField(reply, "expiresAt") } };
}

/** The holder labels an inspect lists (a JSON list of strings). */
export function labelsOf(reply: ScriptReply): string[] {
  return listField(reply, "holderLabels").map((label) => String(label));
}

/** A number inside a JSON list entry (fences and times come as strings, counts as numbers). */
export function entryNumber(entry: Record<string, unknown>, field: string): number {
  const n = Number(entry[field]);
  if (entry[field] === undefined || entry[field] === "" || !Number.isFinite(n)) {
    throw new InternalError(`expected a number in ${field} of ${JSON.stringify(entry).slice(0, 200)}`);
  }
  return n;
}

export function entryString(entry: Record<string, unknown>, field: string): string {
  const v = entry[field];
  if (typeof v !== "string") throw new InternalError(`expected a string in ${field} of ${JSON.stringify(entry).slice(0, 200)}`);
  return v;
}

/** The waiters of a queue step as script arguments: at most this many per step (the rest are "more"). */
export const ADMIT_BATCH = 64;

/** A grant's lease, as a script answers it (in a reply, or an entry of a step's list of grants). */
export const leaseOf = (entry: Record<string, unknown>) => ({
  fence: entryNumber(entry, "fence"),
  ttlMs: entryNumber(entry, "ttlMs"),
  expiresAt: entryNumber(entry, "expiresAt"),
});

/**
 * An acquire's reply when it granted (marked when the lock has watchers) or
 * was turned away (when to look again, whether waiters are first, the holder
 * in the way when the script named one); undefined for the kind's own answers.
 */
export function grantedOrBusy<G>(reply: ScriptReply, grantOf: (entry: Record<string, unknown>) => G) {
  if (reply.status === "granted") return markedIfWatched(reply, { status: "granted" as const, grant: grantOf(reply) });
  if (reply.status !== "busy") return undefined;
  return { status: "busy" as const, retryAfterMs: numberField(reply, "retryAfterMs"), queued: reply.queued === "1", ...currentOf(reply) };
}

/** An acquire's arguments: its token, the kind's own (ownArgs), then its lease's (ttl, watch, label), as lua/<kind>/acquire.lua reads them. */
export function acquireArgs(input: HolderLeaseInput, ownArgs: Array<string | number>): Array<string | number> {
  return [input.token, ...ownArgs, input.ttlMs, input.watch ? "1" : "0", input.holder ?? ""];
}

/** A line step's arguments: whether more wait behind, how many come, then each waiter's token, its own (ownArgs), and its lease's. */
export function admitArgs<W extends QueuedHolder>(waiters: W[], more: boolean, ownArgs: (w: W) => Array<string | number>): Array<string | number> {
  const args: Array<string | number> = [more ? "1" : "0", waiters.length];
  for (const w of waiters) args.push(w.token, ...ownArgs(w), w.ttlMs, w.watch ? "1" : "0", w.markPickup ? "1" : "0", w.holder ?? "");
  return args;
}

/**
 * A line step's reply: its grants and refusals (each kind reads its own
 * entries; a kind that refuses nobody has no list of them), and when to look
 * again if a waiter was left in line.
 */
export function admittedOf<G>(
  script: string,
  reply: ScriptReply,
  grantOf: (entry: Record<string, unknown>) => G,
  refusedOf?: (entry: Record<string, unknown>) => Admitted<G>["refused"][number],
): Admitted<G> {
  if (reply.status !== "ok") throw unexpectedReply(script, reply);
  const retryAfterMs = optionalNumberField(reply, "retryAfterMs");
  return {
    granted: listField(reply, "granted").map(grantOf),
    refused: refusedOf ? listField(reply, "refused").map(refusedOf) : [],
    ...(retryAfterMs === null ? {} : { retryAfterMs }),
  };
}

/**
 * A many-holder kind on the Redis store: the holders' shared scripts on its
 * keys, beside its own (acquire, admit, release, inspect: lua/<kind>/*.lua);
 * its listing scans the keys' lock hash.
 */
export function holdersOnRedis<K extends KindKey<KindName, HolderOps>>(
  key: K,
  keysOf: (ref: LockRef) => HolderKeys,
  own: (scripts: ScriptRunner) => OwnOps<OpsOf<K>>,
): RedisKind<K> {
  return {
    name: key.name,
    redis: {
      // The two halves make the kind's operations: HolderOps, and the rest of them.
      ops: (scripts) => ({ ...redisHolderOps(scripts, keysOf), ...own(scripts) }) as OpsOf<K>,
      mainKey: (ref) => keysOf(ref).lock,
      watcherKey: (ref) => keysOf(ref).watchers,
    },
  };
}

/** The operations both many-holder kinds share, on the Redis store, for a kind's keys. */
function redisHolderOps(scripts: ScriptRunner, keysOf: (ref: LockRef) => HolderKeys): HolderOps {
  const holders = redisHolders(scripts);
  return {
    heartbeat: (ref, input) => holders.heartbeat(keysOf(ref), input),
    withdraw: (ref, input) => holders.withdraw(keysOf(ref), input),
    watch: (ref, { token }) => holders.watch(keysOf(ref), token ?? ""),
    ungate: (ref) => holders.ungate(keysOf(ref)),
    forceRelease: (ref, input) => holders.forceRelease(keysOf(ref), input),
  };
}
