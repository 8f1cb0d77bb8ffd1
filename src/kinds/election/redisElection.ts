import type { ELECTION, ElectionOps } from "./types.js";
import type { RedisKind } from "../../store/redis/RedisKinds.js";
import { numberField, type ScriptRunner, unexpectedReply } from "../../store/redis/ScriptRunner.js";
import { markedIfWatched } from "../../store/redis/watchedResults.js";
import { redisMutex } from "../mutex/redisMutex.js";
import { electionKeys } from "./keys.js";

/** An election on the Redis store: the mutex's scripts on the election's keys, and lua/election/proclaim.lua. */
function redisElection(scripts: ScriptRunner): ElectionOps {
  return {
    ...redisMutex(scripts, electionKeys),
    async proclaim(ref, { token, value }) {
      const lock = electionKeys.lock(ref);
      const r = await scripts.run("election_proclaim", [lock], [token, value], electionKeys.watchers(lock));
      if (r.status === "lost") return { status: "lost" };
      if (r.status !== "ok") throw unexpectedReply("election_proclaim", r);
      return markedIfWatched(r, { status: "ok", fence: numberField(r, "fence"), expiresAt: numberField(r, "expiresAt") });
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
