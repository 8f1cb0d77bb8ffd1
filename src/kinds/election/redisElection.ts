import type { ELECTION, ElectionOps } from "./types.js";
import type { RedisKind } from "../../store/redis/RedisKinds.js";
import { numberField, optionalNumberField, type ScriptRunner, unexpectedReply } from "../../store/redis/ScriptRunner.js";
import { markedIfWatched } from "../../store/redis/watchedResults.js";
import { redisMutex } from "../mutex/redisMutex.js";
import { electionKeys } from "./keys.js";

/** An election on the Redis store: the mutex's scripts on the election's keys, and lua/election/proclaim.lua. */
function redisElection(scripts: ScriptRunner): ElectionOps {
  const rules = redisMutex(scripts, electionKeys);
  return {
    ...rules,
    // Every grant (a campaign's, the line's) goes into the history; a handoff does too (lua/mutex/release.lua).
    acquire: (ref, input) => rules.acquire(ref, { ...input, history: true }),
    async proclaim(ref, { token, value }) {
      const lock = electionKeys.lock(ref);
      const r = await scripts.run("election_proclaim", [lock], [token, value], electionKeys.watchers(lock));
      if (r.status === "lost") return { status: "lost" };
      if (r.status !== "ok") throw unexpectedReply("election_proclaim", r);
      return markedIfWatched(r, {
        status: "ok",
        fence: numberField(r, "fence"),
        expiresAt: numberField(r, "expiresAt"),
        position: numberField(r, "position"),
      });
    },
    async observe(ref, { since }) {
      const r = await scripts.run("election_observe", [electionKeys.lock(ref)], [String(since)]);
      const changes = JSON.parse(r.changes ?? "[]") as Array<[number, number, string, number]>;
      return {
        leader: r.held === "1" ? { term: numberField(r, "fence"), value: r.holder ?? "", expiresAt: numberField(r, "expiresAt") } : null,
        position: numberField(r, "position"),
        first: optionalNumberField(r, "first"),
        changes: changes.map(([position, term, value, at]) => ({ position, term, value, at })),
      };
    },
  };
}

/** An election on the Redis store: its scripts and keys. Its hash outlives the term (with the last term), as a mutex's does. */
export const electionOnRedis: RedisKind<typeof ELECTION> = {
  name: "election",
  redis: {
    ops: redisElection,
    mainKey: electionKeys.lock,
    watcherKey: (ref) => electionKeys.watchers(electionKeys.lock(ref)),
  },
};
