import type { Env } from "../env.js";
import { RateLimitedError } from "../errors.js";
import { SOCKET_OPEN_BURST_DEFAULT, SOCKET_OPENS_PER_SECOND_DEFAULT } from "../limits.js";
import { logError } from "../logError.js";
import { floodPenalties, floodRefusal } from "./floodPenalties.js";
import { type Tier, tierOf } from "./rateLimit.js";

/** At most this many ids' buckets are kept per box (the stalest goes first: it has refilled, or nearly). */
const MAX_REMEMBERED = 10_000;

/** How many new sockets an id may open at once, and how fast that refills. */
export interface OpenRate {
  burst: number;
  perSecond: number;
}

/** SOCKET_OPEN_BURST and SOCKET_OPENS_PER_SECOND: positive integers, else the defaults (a bad value is logged once). */
export function openRateOf(env: Pick<Env, "SOCKET_OPEN_BURST" | "SOCKET_OPENS_PER_SECOND">): OpenRate {
  return {
    burst: positiveSetting(env.SOCKET_OPEN_BURST, SOCKET_OPEN_BURST_DEFAULT, "SOCKET_OPEN_BURST"),
    perSecond: positiveSetting(env.SOCKET_OPENS_PER_SECOND, SOCKET_OPENS_PER_SECOND_DEFAULT, "SOCKET_OPENS_PER_SECOND"),
  };
}

/**
 * The rate of new wait and watch sockets (docs/API.md, "Limits of a wait
 * socket"), before any flood is seen: each id (a key, every scoped token of
 * a namespace together, an address) has a bucket of `burst` handshakes,
 * refilled at `perSecond`, and a handshake takes one from each of its ids'
 * buckets or is refused (429 `rate_limited`, limit `socket_rate`), taking
 * none. Kept in memory: once per isolate, which the Worker asks before a
 * handshake goes anywhere, and in each namespace object, which every
 * handshake of the namespace passes through (socketCaps.ts), so the rate
 * holds over every isolate. A box that is evicted forgets its buckets: at
 * most one burst more.
 */
export class SocketOpens {
  private readonly byId = new Map<string, { tokens: number; at: number }>();

  /** One new socket for these ids: 0 when each had room (taken from all), else how many ms until all have (nothing taken). */
  take(ids: readonly string[], rate: OpenRate, now = Date.now()): number {
    const levels = ids.map((id) => {
      const last = this.byId.get(id);
      return last ? Math.min(rate.burst, last.tokens + ((now - last.at) * rate.perSecond) / 1000) : rate.burst;
    });
    const short = Math.max(0, ...levels.map((tokens) => 1 - tokens));
    if (short > 0) return Math.max(1, Math.ceil((short * 1000) / rate.perSecond));
    ids.forEach((id, i) => {
      this.byId.delete(id);
      this.byId.set(id, { tokens: levels[i] - 1, at: now });
    });
    // A Map iterates in insertion order, and every take re-inserts: the first entries are the stalest.
    while (this.byId.size > MAX_REMEMBERED) this.byId.delete(this.byId.keys().next().value as string);
    return 0;
  }
}

/** A handshake over its key's or address's rate of new sockets (429 rate_limited, limit socket_rate). */
export class SocketRateRefusal extends RateLimitedError {
  override name = "SocketRateRefusal";
  constructor(retryAfterMs: number, rate: OpenRate) {
    super(
      retryAfterMs,
      `this key or address opens new sockets faster than allowed (${rate.burst} at once, then ${rate.perSecond} a second): retry after retryAfterMs`,
      "socket_rate",
    );
  }
}

/** This isolate's box: the Worker takes from it before a socket's handshake goes anywhere. */
const socketOpens = new SocketOpens();

const warned = new Set<string>();

/** A Worker variable that is a positive integer (a cap, a rate), else its default (a bad value is logged once). */
export function positiveSetting(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (Number.isInteger(n) && n > 0) return n;
  if (!warned.has(name)) {
    warned.add(name);
    logError(`${name} is not a positive integer; using ${fallback}`, value);
  }
  return fallback;
}

/**
 * A new wait or watch socket, as the Worker admits it, in one call before any lock object hears of it: a
 * client that flooded a socket lately is refused (floodPenalties.ts), then one that opens sockets faster than
 * its key or address may, flood or not (the namespace object counts again, over every isolate). Its answer
 * is the namespace's budget tier, which the object counts the socket's messages against.
 */
export function admitSocketOpen(
  env: Pick<Env, "SOCKET_OPEN_BURST" | "SOCKET_OPENS_PER_SECOND" | "RATE_LIMIT_TIERS">,
  ns: string,
  clientIds: readonly string[],
  openIds: readonly string[],
): Tier {
  const boxed = floodPenalties.refusedFor(clientIds);
  if (boxed > 0) throw floodRefusal(boxed, Date.now() + boxed);
  const rate = openRateOf(env);
  const wait = socketOpens.take(openIds, rate);
  if (wait > 0) throw new SocketRateRefusal(wait, rate);
  return tierOf(env.RATE_LIMIT_TIERS, ns);
}
