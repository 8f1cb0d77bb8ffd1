import { numberField, type ScriptReply, unexpectedReply } from "./ScriptRunner.js";

/**
 * Results of the Worker's writes whose script answered watchers "1": the
 * lock's watchers key (lua/FIELDS.md) exists, so its lock object has watch
 * sockets to push the change to (changeNotes.ts tells it). A
 * mark beside the result rather than a field in it: results are spread into
 * HTTP answers, and the library's never carry it.
 */
const watched = new WeakSet<object>();

/** The result, marked when its script's reply says the lock has watchers. */
export function markedIfWatched<T extends object>(reply: ScriptReply, result: T): T {
  if (reply.watchers === "1") watched.add(result);
  return result;
}

/** Whether the write that answered this result found watchers on its lock. */
export function foundWatchers(result: unknown): boolean {
  return typeof result === "object" && result !== null && watched.has(result);
}

/**
 * A lease write's answer (a heartbeat, a release, a complete): lost, or ok with the fields `ok` reads
 * from the reply, marked when the lock has watchers; any other status is a bug.
 */
export function okOrLost<T extends object>(script: string, reply: ScriptReply, ok: () => T): { status: "lost" } | ({ status: "ok" } & T) {
  if (reply.status === "lost") return { status: "lost" };
  if (reply.status !== "ok") throw unexpectedReply(script, reply);
  return markedIfWatched(reply, { status: "ok" as const, ...ok() });
}

/** A heartbeat's answer: the lease's new end and its fence. */
export const leaseEndOf = (r: ScriptReply) => ({
  expiresAt: numberField(r, "expiresAt"),
  ttlMs: numberField(r, "ttlMs"),
  fence: numberField(r, "fence"),
});
