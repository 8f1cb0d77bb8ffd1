/**
 * Who flooded a wait socket, and until when their new sockets are refused
 * (docs/guarantees.md, "A wait socket flood"). A socket refused for its
 * messages is closed at once; what makes a flood cheap to stop is that its
 * client cannot come straight back: its key and its address (when the
 * platform gives one) are refused new sockets at the Worker, before any
 * object work, for PENALTY_FIRST_MS, doubling with each flood up to
 * PENALTY_MAX_MS, and forgotten after STRIKES_KEPT_MS without one.
 *
 * Kept in memory, once per isolate (the Worker and the lock objects that
 * share it see the same box), and in the namespace object, which every
 * handshake of the namespace passes through (lockObject/sockets/socketCaps.ts): an isolate that
 * has not seen the flood learns it from the object's refusal.
 */

import { RateLimitedError } from "../errors.js";

/** The first refusal of a flooder's new sockets. */
const PENALTY_FIRST_MS = 1000;
/** The longest: a client that floods again and again waits this long between tries. */
const PENALTY_MAX_MS = 60_000;
/** A flooder quiet this long after its last flood starts again from PENALTY_FIRST_MS. */
const STRIKES_KEPT_MS = 10 * 60_000;
/** At most this many flooders are remembered per isolate (the oldest penalty goes first). */
const MAX_REMEMBERED = 10_000;

interface Strikes {
  /** New sockets are refused until then. */
  until: number;
  /** Floods so far. */
  strikes: number;
  /** When the last one was. */
  at: number;
}

/** A box of who flooded: their ids (a key's, an address's) and until when they are refused. One per isolate (floodPenalties, below); its tests make fresh ones. */
export class FloodPenalties {
  private readonly byId = new Map<string, Strikes>();

  /** One more flood by these ids: each is refused for twice as long as the last time (from PENALTY_FIRST_MS). Answers until when. */
  strike(ids: readonly string[], now = Date.now()): number {
    let until = now;
    for (const id of ids) {
      const last = this.byId.get(id);
      const strikes = last && now - last.at < STRIKES_KEPT_MS ? last.strikes + 1 : 1;
      const box = Math.min(PENALTY_MAX_MS, PENALTY_FIRST_MS * 2 ** (strikes - 1));
      const entry = { until: Math.max(now + box, last?.until ?? 0), strikes, at: now };
      this.remember(id, entry);
      until = Math.max(until, entry.until);
    }
    return until;
  }

  /** A penalty decided elsewhere (the namespace object's): kept here too, so the next try is refused without asking. */
  learn(ids: readonly string[], until: number, now = Date.now()): void {
    for (const id of ids) {
      const last = this.byId.get(id);
      if (last && last.until >= until) continue;
      this.remember(id, { until, strikes: last?.strikes ?? 1, at: last?.at ?? now });
    }
  }

  /** How long these ids are still refused new sockets: 0 when none of them is. */
  refusedFor(ids: readonly string[], now = Date.now()): number {
    let left = 0;
    for (const id of ids) {
      const entry = this.byId.get(id);
      if (entry && entry.until > now) left = Math.max(left, entry.until - now);
    }
    return left;
  }

  private remember(id: string, entry: Strikes): void {
    this.byId.delete(id);
    this.byId.set(id, entry);
    // A Map iterates in insertion order, and every write re-inserts: the first entry is the stalest.
    if (this.byId.size > MAX_REMEMBERED) this.byId.delete(this.byId.keys().next().value as string);
  }
}

/** A new socket refused because its key or address flooded one (429 rate_limited, limit socket_flood); `until`: epoch ms. */
export class FloodRefusal extends RateLimitedError {
  override name = "FloodRefusal";
  constructor(
    retryAfterMs: number,
    readonly until: number,
  ) {
    super(
      retryAfterMs,
      `this key or address sent a wait socket's messages faster than allowed, so it may open no new socket for ${Math.ceil(retryAfterMs / 1000)} s (each flood doubles it, up to ${PENALTY_MAX_MS / 1000} s)`,
      "socket_flood",
    );
  }
}

export const floodRefusal = (retryAfterMs: number, until: number): FloodRefusal => new FloodRefusal(Math.max(1, Math.ceil(retryAfterMs)), until);

/** This isolate's box: the Worker reads it before a socket's handshake goes anywhere, the lock objects write it. */
export const floodPenalties = new FloodPenalties();
