import type { CurrentHolder } from "../../errors.js";
import { InternalError } from "../../errors.js";
import { numberField, type ScriptReply, type ScriptRunner, unexpectedReply } from "../../store/redis/ScriptRunner.js";
import { watchStateOf } from "../../store/redis/watchStateOf.js";
import { leaseEndOf, okOrLost } from "../../store/redis/watchedResults.js";
import type { WatchState } from "../../store/types.js";
import type { WithdrawReason } from "../../store/types.js";
import type { HolderKeys } from "./keys.js";
import type { LockRef } from "../../store/types.js";
import type { HolderForceInput, HolderForceResult, HolderHeartbeatResult, HolderOps, HolderWithdrawResult } from "./types.js";

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
export function listField(reply: ScriptReply, field: string): Array<Record<string, unknown>> {
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
export function currentOf(reply: ScriptReply): { current?: CurrentHolder } {
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

/** The operations both many-holder kinds share, on the Redis store, for a kind's keys. */
export function redisHolderOps(scripts: ScriptRunner, keysOf: (ref: LockRef) => HolderKeys): HolderOps {
  const holders = redisHolders(scripts);
  return {
    heartbeat: (ref, input) => holders.heartbeat(keysOf(ref), input),
    withdraw: (ref, input) => holders.withdraw(keysOf(ref), input),
    watch: (ref, { token }) => holders.watch(keysOf(ref), token ?? ""),
    ungate: (ref) => holders.ungate(keysOf(ref)),
    forceRelease: (ref, input) => holders.forceRelease(keysOf(ref), input),
  };
}
