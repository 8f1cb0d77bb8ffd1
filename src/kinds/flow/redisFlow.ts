import type { FLOW } from "./types.js";
import type { RedisKind } from "../../store/redis/RedisKinds.js";
import { numberField, optionalNumberField, type ScriptReply, type ScriptRunner, unexpectedReply } from "../../store/redis/ScriptRunner.js";
import { markedIfWatched } from "../../store/redis/watchedResults.js";
import { currentOf, entryNumber, entryString, labelsOf, listField, redisHolderOps } from "../manyHolders/redisHolders.js";
import { flowKeys } from "./keys.js";
import { type FlowBusyReason, type FlowGrant, type FlowLimit, type FlowOps, limitOfText, mismatch } from "./types.js";

/** A limit as a script's three arguments: concurrency, rate count, rate perMs ("" for a part absent). */
const limitArgs = (l: FlowLimit) => [l.concurrency ?? "", l.rate?.count ?? "", l.rate?.perMs ?? ""];

const startsOf = (v: unknown) => (v === undefined || v === "" ? null : Number(v));

function grantOf(name: string, entry: Record<string, unknown>): FlowGrant {
  return {
    name,
    token: entryString(entry, "token"),
    fence: entryNumber(entry, "fence"),
    ttlMs: entryNumber(entry, "ttlMs"),
    expiresAt: entryNumber(entry, "expiresAt"),
    startedAt: entryNumber(entry, "startedAt"),
    held: entryNumber(entry, "held"),
    starts: startsOf(entry.starts),
  };
}

const reasonOf = (r: ScriptReply) => r.reason as FlowBusyReason;

/** The flow limit on the Redis store: lua/flow/<op>.lua, and the shared holder scripts. */
function redisFlow(scripts: ScriptRunner): FlowOps {
  return {
    ...redisHolderOps(scripts, flowKeys),
    async acquire(ref, input) {
      const k = flowKeys(ref);
      const r = await scripts.run(
        "flow_acquire",
        [k.lock, k.fence, k.gate, k.starts, k.limit],
        [input.token, ...limitArgs(input), input.ttlMs, input.watch ? "1" : "0", input.holder ?? ""],
        k.watchers,
      );
      switch (r.status) {
        case "granted":
          return markedIfWatched(r, { status: "granted", grant: grantOf(ref.name, r) });
        case "busy":
          return { status: "busy", retryAfterMs: numberField(r, "retryAfterMs"), queued: r.queued === "1", reason: reasonOf(r), ...currentOf(r) };
        case "limit_mismatch":
          return { status: "limit_mismatch", limit: limitOfText(r.limit ?? "") };
      }
      throw unexpectedReply("flow_acquire", r);
    },

    async admit(ref, waiters, more) {
      const k = flowKeys(ref);
      const args: Array<string | number> = [more ? "1" : "0", waiters.length];
      for (const w of waiters) {
        args.push(w.token, ...limitArgs(w), w.ttlMs, w.watch ? "1" : "0", w.markPickup ? "1" : "0", w.holder ?? "");
      }
      const r = await scripts.run("flow_admit", [k.lock, k.fence, k.gate, k.starts, k.limit], args);
      if (r.status !== "ok") throw unexpectedReply("flow_admit", r);
      const refused = listField(r, "refused").map((x) => ({ token: entryString(x, "token"), limit: limitOfText(entryString(x, "limit")) }));
      const retryAfterMs = optionalNumberField(r, "retryAfterMs");
      return {
        granted: listField(r, "granted").map((g) => grantOf(ref.name, g)),
        refused: refused.map((x) => ({ token: x.token, ...mismatch(x.limit) })),
        ...(retryAfterMs === null ? {} : { retryAfterMs, reason: reasonOf(r) }),
      };
    },

    async release(ref, input) {
      const k = flowKeys(ref);
      const r = await scripts.run("flow_release", [k.lock, k.request(input.requestId), k.ended, k.gate], [input.token], k.watchers);
      if (r.status === "lost") return { status: "lost" };
      if (r.status !== "ok") throw unexpectedReply("flow_release", r);
      return markedIfWatched(r, { status: "ok", held: numberField(r, "held"), watched: r.watched === "1", waiters: r.waiters === "1" });
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

/** The flow limit on the Redis store: its scripts and keys (in the library's list of kinds and the Worker's). */
export const flowOnRedis: RedisKind<typeof FLOW> = {
  name: "flow",
  redis: {
    ops: redisFlow,
    mainKey: (ref) => flowKeys(ref).lock,
    watcherKey: (ref) => flowKeys(ref).watchers,
  },
};
