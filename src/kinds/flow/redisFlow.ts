import { numberField, optionalNumberField, type ScriptReply, type ScriptRunner, unexpectedReply } from "../../store/redis/ScriptRunner.js";
import {
  acquireArgs,
  admitArgs,
  admittedOf,
  entryNumber,
  entryString,
  grantedOrBusy,
  holdersOnRedis,
  labelsOf,
  leaseOf,
} from "../manyHolders/redisHolders.js";
import { okOrLost } from "../../store/redis/watchedResults.js";
import type { OwnOps } from "../manyHolders/types.js";
import { flowKeys } from "./keys.js";
import { FLOW, type FlowBusyReason, type FlowGrant, type FlowLimit, type FlowOps, limitOfText, mismatch } from "./types.js";

/** A limit as a script's three arguments: concurrency, rate count, rate perMs ("" for a part absent). */
const limitArgs = (l: FlowLimit) => [l.concurrency ?? "", l.rate?.count ?? "", l.rate?.perMs ?? ""];

const startsOf = (v: unknown) => (v === undefined || v === "" ? null : Number(v));

function grantOf(name: string, entry: Record<string, unknown>): FlowGrant {
  return {
    name,
    token: entryString(entry, "token"),
    ...leaseOf(entry),
    startedAt: entryNumber(entry, "startedAt"),
    held: entryNumber(entry, "held"),
    starts: startsOf(entry.starts),
  };
}

const reasonOf = (r: ScriptReply) => r.reason as FlowBusyReason;

/** The flow limit's own operations on the Redis store: lua/flow/<op>.lua. */
function redisFlow(scripts: ScriptRunner): OwnOps<FlowOps> {
  return {
    async acquire(ref, input) {
      const k = flowKeys(ref);
      const r = await scripts.run("flow_acquire", [k.lock, k.fence, k.gate, k.starts, k.limit], acquireArgs(input, limitArgs(input)), k.watchers);
      const tried = grantedOrBusy(r, (g) => grantOf(ref.name, g));
      // A busy try says which part of the limit turned it away (or that others wait first).
      if (tried) return tried.status === "busy" ? { ...tried, reason: reasonOf(r) } : tried;
      if (r.status === "limit_mismatch") return { status: "limit_mismatch", limit: limitOfText(r.limit ?? "") };
      throw unexpectedReply("flow_acquire", r);
    },

    async admit(ref, waiters, more) {
      const k = flowKeys(ref);
      const r = await scripts.run("flow_admit", [k.lock, k.fence, k.gate, k.starts, k.limit], admitArgs(waiters, more, limitArgs));
      const step = admittedOf(
        "flow_admit",
        r,
        (g) => grantOf(ref.name, g),
        (x) => ({ token: entryString(x, "token"), ...mismatch(limitOfText(entryString(x, "limit"))) }),
      );
      // A waiter left in line: which part of the limit stopped it (its window wakes the line, not a release).
      return step.retryAfterMs === undefined ? step : { ...step, reason: reasonOf(r) };
    },

    async release(ref, input) {
      const k = flowKeys(ref);
      const r = await scripts.run("flow_release", [k.lock, k.request(input.requestId), k.ended, k.gate], [input.token], k.watchers);
      return okOrLost("flow_release", r, () => ({ held: numberField(r, "held"), watched: r.watched === "1", waiters: r.waiters === "1" }));
    },

    async inspect(ref) {
      const k = flowKeys(ref);
      const r = await scripts.run("flow_inspect", [k.lock, k.starts, k.limit], []);
      return {
        limit: r.limit ? limitOfText(r.limit) : null,
        held: numberField(r, "held"),
        holderLabels: labelsOf(r),
        expiresAt: optionalNumberField(r, "expiresAt"),
        starts: startsOf(r.starts),
        nextStartAt: optionalNumberField(r, "nextStartAt"),
      };
    },
  };
}

/** The flow limit on the Redis store: its scripts and keys (in the library's list of kinds and the Worker's), beside the shared holder scripts. */
export const flowOnRedis = holdersOnRedis(FLOW, flowKeys, redisFlow);
