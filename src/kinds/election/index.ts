import { ELECTION } from "./types.js";
import { mutexForceBody } from "../../operator/schemas.js";
import { nextMutexDeadline } from "../mutex/durableMutex.js";
import { MutexObjectPart } from "../mutex/objectPart.js";
import { defineKind, waitedOn } from "../kind.js";
import { durableElection } from "./durableElection.js";
import { leaderIn, watchedHistory } from "./leader.js";
import { electionOperations } from "./operations.js";
import { electionOnRedis } from "./redisElection.js";
import { electionNotes, forceResign, leader } from "./service.js";
import { campaignMessage } from "./schemas.js";
import { electionWait } from "./wait.js";

/**
 * Leader election (docs/API.md "Elections"): a kind of its own whose rules
 * are the mutex's (its lock object part, its line, its scripts and Durable
 * rules, under the election's keys and lock objects), with the value as the
 * leader's label and proclaim its one rule of its own.
 */
export const election = defineKind<typeof ELECTION>({
  ...electionOnRedis,
  nameInMessages: "the election",
  object: {
    part: (host) => new MutexObjectPart(host, ELECTION),
    durable: durableElection,
    nextDeadline: nextMutexDeadline,
    wait: electionWait,
    // Its GET's state, pushed to its watch sockets on every change; with the changes since, to a watch at a position.
    watchedState: async (store, ref, waiters) => ({ name: ref.name, ...(await leaderIn(store, ref)), waiters: waiters() }),
    watchedHistory,
    acquireBody: campaignMessage,
  },
  service: {
    inspect: (request, name) => leader(request, name),
    listed: (s) => s.term != null || waitedOn(s),
    forceRelease: (request, name, ask) => forceResign(request, name, ask.fence),
    writeNotes: electionNotes,
  },
  http: {
    path: "/v1/elections",
    operations: electionOperations,
    offeredOnQuorum: false,
    nameParam: "name",
    oneInSummaries: "an election",
    listedInSummaries: "led or waited-on elections",
    watchPosition:
      "The last position of the election's history the observer saw: every push then carries the changes after the last position " +
      "it was sent (the first, those after this one), so the socket alone tells every change in order. A whole number up to the " +
      "history's last position, else 400 invalid_position before any socket.",
    // The mutex's body: why, and optionally the fence (the term) of the leader seen.
    forceReleaseBody: ["MutexForceReleaseRequest", mutexForceBody],
  },
});
