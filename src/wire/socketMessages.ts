import * as z from "zod/mini";
import { WAIT_MAX_MS } from "../limits.js";
import { errorResponse, heartbeatResponse, intFrom, ttlMs } from "./schemas.js";

/**
 * The wait socket's messages (docs/API.md, "Waiting over a WebSocket"), each
 * described once, here: a zod schema, and its TypeScript type inferred from
 * it. A client opens GET /v1/<kind path>/<name>/wait as a WebSocket, the
 * Worker hands the socket to the lock's object, and the two speak these
 * JSON messages:
 *
 *   client -> object  acquireMessage    once, first: the kind's acquire body
 *   client -> object  renewMessage      while waiting: the wait now ends waitMs from now, same place
 *   object -> client  granted           the lock is offered
 *   client -> object  ackMessage        it is taken
 *   object -> client  held              it is the client's; the object closes (1000)
 *   object -> client  timeout           not granted within waitMs; closes
 *   object -> client  error             as the HTTP error; closes
 *
 * A kind's wait socket may await the end of a state instead (an idempotency
 * key's awaits the end of another caller's run of the key):
 *
 *   client -> object  awaitEndMessage   for how long to wait
 *   object -> client  the kind's own    the state ended: the kind's answer (KindSocketAnswer); closes
 *   object -> client  timeout           not ended after waitMs; closes
 *
 * The kind's answers are its own (an idempotency key's `completed` and
 * `free`: src/kinds/idempotency/objectPart.ts): this file lists none.
 *
 * An acquire with `"keep": true` keeps the socket open after `held`, for
 * the holder's own heartbeats and release (the release then hands the lock
 * to the next waiter in the same object, with no Worker in between):
 *
 *   client -> object  holderMessage heartbeat   -> heartbeat
 *   client -> object  holderMessage release     -> released; closes
 *
 * A grant counts only once acknowledged: a socket that closes before its
 * ack gives the grant back to the line at once, and one that closes while
 * waiting leaves the line at once. After `held`, closing changes nothing: a
 * lease ends by release or TTL.
 *
 * A watch socket (GET /v1/<kind path>/<name>/watch) takes no place in
 * line: it pushes the lock's state, as its GET answers it, whenever it changes:
 *
 *   client -> object  watchStartMessage   once, first
 *   object -> client  state               at once, then on every change (opened at a position,
 *                                         ?since=N: with the changes after the last one it was sent)
 *   object -> client  error               as above; closes
 *
 * The object checks what reaches a socket with these schemas; the client
 * SDK, which ships to browsers without zod, imports only their types (type
 * imports are erased), through socketProtocol.ts.
 */

// What a client sends.

/**
 * A waiting kind's acquire: the kind's acquire body (checked by the kind's
 * service), and `keep` to keep the socket after `held`.
 */
export const acquireMessage = z.looseObject({
  type: z.literal("acquire"),
  keep: z.optional(z.boolean({ error: "must be true or false" })),
});

/** A waiter's renewal: its wait now ends waitMs from now, in the same place in the line. */
export const renewMessage = z.strictObject({ type: z.literal("renew"), waitMs: intFrom(1, WAIT_MAX_MS) });

/** The grant offered is taken: the token it came with. */
export const ackMessage = z.strictObject({ type: z.literal("ack"), token: z.string() });

/** A wait for a state's end (an idempotency key's: another caller's run): for how long. Its type is "watch" on the wire. */
export const awaitEndMessage = z.strictObject({ type: z.literal("watch"), waitMs: intFrom(1, WAIT_MAX_MS) });

/** A watch socket's first and only message: start pushing the lock's state. */
export const watchStartMessage = z.strictObject({ type: z.literal("watch") });

/** A socket holder's heartbeat (with an optional new ttlMs) or release. */
export const holderMessage = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("heartbeat"), ttlMs: z.optional(ttlMs) }),
  z.strictObject({ type: z.literal("release") }),
]);

// What the object answers. Nothing checks these today (the client takes them as typed, without zod), so the
// schema is not exported, only its type: export it for whoever comes to check them (a Node client, a test).

/** What the object sends. */
const socketAnswer = z.discriminatedUnion("type", [
  /** The lock is offered: the kind's grant, as its HTTP acquire answers it. */
  z.object({ type: z.literal("granted"), grant: z.unknown() }),
  /** The grant is the client's (after its ack). */
  z.object({ type: z.literal("held") }),
  /** A kept socket's heartbeat: as HTTP answers it. */
  z.extend(heartbeatResponse, { type: z.literal("heartbeat") }),
  /** A kept socket's release: the kind's release answer, as HTTP's. */
  z.looseObject({ type: z.literal("released") }),
  /**
   * A watch socket's lock state, as its GET answers it; on a watch opened at a position, the changes
   * after the last position it was sent, oldest first, and `missed` where the history no longer held
   * the next one (then `changes` is the newest alone).
   */
  z.object({
    type: z.literal("state"),
    state: z.record(z.string(), z.unknown()),
    changes: z.optional(z.array(z.looseObject({ position: z.int() }))),
    missed: z.optional(z.literal(true)),
  }),
  /** Not granted (or the run not ended) within waitMs. */
  z.object({ type: z.literal("timeout"), retryAfterMs: z.int() }),
  /** The HTTP error: its status and body. */
  z.extend(errorResponse, { type: z.literal("error"), status: z.int() }),
]);
export type SocketAnswer = z.output<typeof socketAnswer>;

/**
 * A kind's own answer on its wait socket (an awaited state's end: an idempotency key's `completed` or
 * `free`): a type of its own, which the core sends as it is and never reads.
 */
export type KindSocketAnswer = { type: string } & Record<string, unknown>;

// What the Worker tells the object a socket is for.

/**
 * What a socket is for: set by the Worker from the path and the key, sent
 * to the object on SOCKET_AT_HEADER (socketProtocol.ts), checked there.
 */
export const socketAtSchema = z.object({
  /** The kind's name, as the API names it ("mutex"). */
  kind: z.string().check(z.minLength(1)),
  store: z.enum(["redis", "durable"]),
  ref: z.object({ ns: z.string(), name: z.string() }),
  /** The read-write lock's mode, from the path. */
  mode: z.optional(z.enum(["read", "write"])),
  /** A watch socket (GET .../watch): the lock's state pushed on every change, no place in line. */
  watch: z.optional(z.literal(true)),
  /**
   * A watch socket opened at a position (GET .../watch?since=N, a kind that keeps its changes at
   * positions: an election's history): every push to it carries the changes after the last position
   * it was sent, the first those after N.
   */
  since: z.optional(z.int().check(z.gte(0))),
  /** The client offered SOCKET_PROTOCOL (a browser must be answered with it). */
  protocol: z.boolean(),
  /** The namespace's request budget tier (RATE_LIMIT_TIERS, read by the Worker): every message counts against it. */
  tier: z.optional(z.enum(["low", "standard", "high", "off"])),
  /**
   * A socket opened with a scoped token: when the token expires (epoch ms).
   * From then on the object answers its messages 401 `token_expired` and
   * ends it (a watch socket, at that time), as the Worker refuses its requests.
   */
  until: z.optional(z.number()),
  /**
   * Who opened it, for the flood penalty (src/admission/floodPenalties.ts):
   * the key's id (namespace and key name, or a scoped token's scope) and the
   * client's address where the platform gives one. Never the key itself.
   */
  clientIds: z.optional(z.array(z.string())),
  /**
   * Whose new sockets it counts against, for the rate of new sockets
   * (src/admission/socketOpens.ts): the key's id (every scoped token of
   * the namespace as one) and the client's address where the platform gives one.
   */
  openIds: z.optional(z.array(z.string())),
});

type SocketAtFields = z.output<typeof socketAtSchema>;

/** What a socket is for (socketAtSchema), its kind narrowed to the names a reader knows (the object: KindName). */
export type SocketAt<Kind extends string = string> = { [K in keyof SocketAtFields]: K extends "kind" ? Kind : SocketAtFields[K] };
