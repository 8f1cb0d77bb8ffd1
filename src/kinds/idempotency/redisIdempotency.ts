import type { IDEMPOTENCY } from "./types.js";
import type { RedisKind } from "../../store/redis/RedisKinds.js";
import { InternalError } from "../../errors.js";
import { watchStateOf } from "../../store/redis/watchStateOf.js";
import { leaseEndOf, markedIfWatched, okOrLost } from "../../store/redis/watchedResults.js";
import { numberField, type ScriptReply, type ScriptRunner, unexpectedReply } from "../../store/redis/ScriptRunner.js";
import { idempotencyKeys } from "./keys.js";
import type {
  IdempotencyBeginResult,
  IdempotencyCompleteResult,
  IdempotencyFailResult,
  IdempotencyHeartbeatResult,
  IdempotencyState,
  IdempotencyOps,
} from "./types.js";

/** Idempotency keys on the Redis store: one script (lua/idempotency/<op>.lua) per operation. */
function redisIdempotency(scripts: ScriptRunner): IdempotencyOps {
  return {
    async begin(ref, input): Promise<IdempotencyBeginResult> {
      const k = idempotencyKeys(ref);
      const r = await scripts.run(
        "idempotency_begin",
        [k.record, k.fence, k.request(input.requestId)],
        [input.token, input.ttlMs, input.retainMs, input.fingerprint ?? "", input.holder ?? ""],
        k.watchers,
      );
      switch (r.status) {
        case "started":
          return markedIfWatched(r, {
            status: "started",
            token: r.token,
            fence: numberField(r, "fence"),
            ttlMs: numberField(r, "ttlMs"),
            expiresAt: numberField(r, "expiresAt"),
          });
        case "completed":
          return {
            status: "completed",
            response: storedResponse(r.response),
            completedAt: numberField(r, "completedAt"),
            fence: numberField(r, "fence"),
          };
        case "in_progress":
          return {
            status: "in_progress",
            retryAfterMs: numberField(r, "retryAfterMs"),
            expiresAt: numberField(r, "expiresAt"),
            holder: r.holder || null,
          };
        case "mismatch":
          return { status: "mismatch" };
        default:
          throw unexpectedReply("idempotency_begin", r);
      }
    },

    async heartbeat(ref, input): Promise<IdempotencyHeartbeatResult> {
      const k = idempotencyKeys(ref);
      const r = await scripts.run("idempotency_heartbeat", [k.record], [input.token, input.ttlMs ?? ""], k.watchers);
      return okOrLost("idempotency_heartbeat", r, () => leaseEndOf(r));
    },

    async complete(ref, input): Promise<IdempotencyCompleteResult> {
      const k = idempotencyKeys(ref);
      const r = await scripts.run("idempotency_complete", [k.record, k.request(input.requestId)], [input.token, input.responseJson], k.watchers);
      return okOrLost("idempotency_complete", r, () => ({
        completedAt: numberField(r, "completedAt"),
        fence: numberField(r, "fence"),
        waited: r.waited === "1",
      }));
    },

    async fail(ref, input): Promise<IdempotencyFailResult> {
      const k = idempotencyKeys(ref);
      const r = await scripts.run("idempotency_fail", [k.record, k.request(input.requestId), k.ended], [input.token]);
      if (r.status === "lost") return { status: "lost" };
      if (r.status !== "ok") throw unexpectedReply("idempotency_fail", r);
      return { status: "ok", fence: numberField(r, "fence") };
    },

    async watch(ref, { fence }) {
      const k = idempotencyKeys(ref);
      return watchStateOf("idempotency_watch", await scripts.run("idempotency_watch", [k.record, k.ended], [String(fence)]));
    },

    async inspect(ref): Promise<IdempotencyState> {
      return stateOf("idempotency_inspect", await scripts.run("idempotency_inspect", [idempotencyKeys(ref).record], []));
    },

    async inspectWaiting(ref): Promise<IdempotencyState> {
      return stateOf("idempotency_inspect_waiting", await scripts.run("idempotency_inspect_waiting", [idempotencyKeys(ref).record], []));
    },
  };
}

/** inspect's and inspect_waiting's answer (same shape). */
function stateOf(script: string, r: ScriptReply): IdempotencyState {
  if (r.state === "completed") {
    return { state: "completed", fence: numberField(r, "fence"), completedAt: numberField(r, "completedAt"), response: storedResponse(r.response) };
  }
  if (r.state === "started")
    return { state: "started", fence: numberField(r, "fence"), expiresAt: numberField(r, "expiresAt"), holder: r.holder || null };
  if (r.state === "absent") return { state: "absent" };
  throw unexpectedReply(script, r);
}

/**
 * A stored response comes back as "json:<JSON text>": the prefix keeps a
 * client with automatic deserialization from parsing (and so changing) it.
 */
function storedResponse(text: string | undefined): unknown {
  if (!text?.startsWith("json:")) throw new InternalError("expected a stored response from the store");
  return JSON.parse(text.slice("json:".length));
}

/** Idempotency keys on the Redis store: its scripts and keys (in the library's list of kinds and the Worker's). */
export const idempotencyOnRedis: RedisKind<typeof IDEMPOTENCY> = {
  name: "idempotency",
  redis: {
    ops: redisIdempotency,
    mainKey: (ref) => idempotencyKeys(ref).record,
    watcherKey: (ref) => idempotencyKeys(ref).watchers,
  },
};
