import * as z from "zod/mini";
import { intFrom, newLeaseFields, token, ttlMs } from "../../wire/schemas.js";
import { LOCK_DELAY_MAX_MS } from "../../limits.js";
import { InvalidInputError } from "../../errors.js";

/** An election's value at most (UTF-8 bytes): an address, an instance id; lua/election/proclaim.lua and the mutex's acquire check it too. */
const ELECTION_VALUE_MAX_BYTES = 4096;

const utf8 = new TextEncoder();
/** A UTF-16 code unit is at most 3 bytes of UTF-8: a short value needs no encoding. */
const fits = (v: string) => v.length * 3 <= ELECTION_VALUE_MAX_BYTES || utf8.encode(v).length <= ELECTION_VALUE_MAX_BYTES;

const VALUE_SIZE_MESSAGE = `value must be 1 to ${ELECTION_VALUE_MAX_BYTES} bytes (UTF-8)`;

/** The library's check of a value (the HTTP API's is the schema below): InvalidInputError invalid_value. */
export function checkElectionValue(value: unknown): string {
  if (typeof value !== "string" || value.length === 0 || !fits(value)) throw new InvalidInputError("invalid_value", VALUE_SIZE_MESSAGE);
  return value;
}

/** What the leader says to everyone: any text of 1 to 4096 bytes (UTF-8). */
const electionValue = z
  .string()
  .check(z.minLength(1), z.maxLength(ELECTION_VALUE_MAX_BYTES), z.refine(fits, `must be 1 to ${ELECTION_VALUE_MAX_BYTES} bytes (UTF-8)`));

/** The request and response schemas of an election: the routes validate with them, the OpenAPI document is made from them. */
export const campaignBody = z.strictObject({
  value: electionValue,
  ttlMs,
  waitMs: newLeaseFields.waitMs,
  /** If this leader's lease lapses (no resign), nobody leads for this long after (ms). */
  lockDelayMs: z.optional(intFrom(0, LOCK_DELAY_MAX_MS)),
});

/** A campaign on a wait socket: the campaign body, its value carried in line as the lease's label (`holder`), as over HTTP. */
export const campaignMessage = z.pipe(
  campaignBody,
  z.transform(({ value, ...rest }) => ({ ...rest, holder: value })),
);

/** A leader's lease: its fence is the term (count is always 1: a campaign does not re-enter). */
export const leadership = z.object({
  name: z.string(),
  token: z.string(),
  fence: z.int(),
  ttlMs: z.int(),
  expiresAt: z.int(),
  count: z.int(),
});

export const proclaimBody = z.strictObject({ token, value: electionValue });
/** `position`: the history's last after it (a value the leader already said is not appended again). */
export const proclaimResponse = z.object({ term: z.int(), expiresAt: z.int(), position: z.int() });
export const resignResponse = z.object({ resigned: z.boolean() });

/** Who leads: every field null when nobody does. */
export const leaderResponse = z.object({
  name: z.string(),
  value: z.nullable(z.string()),
  /** The leader's term: its lease's fence. */
  term: z.nullable(z.int()),
  /** When its term began (ms, the store's clock, as its fence records it). */
  since: z.nullable(z.int()),
  expiresAt: z.nullable(z.int()),
  /** The position of the last change (a new leader or a proclaim) in the election's history; 0 before any. */
  position: z.int(),
  /** Campaigns waiting in line. */
  waiters: z.int(),
});

/** One change: a new leader (a new term) or its new value, at its position. */
const electionChange = z.object({ position: z.int(), term: z.int(), value: z.string(), at: z.int() });

/** The changes an election's history keeps (the last 64), oldest first, and who leads now. */
export const changesResponse = z.object({
  name: z.string(),
  value: z.nullable(z.string()),
  term: z.nullable(z.int()),
  since: z.nullable(z.int()),
  expiresAt: z.nullable(z.int()),
  position: z.int(),
  /** The oldest position kept (null before any change): an observer whose last seen is below it missed changes. */
  first: z.nullable(z.int()),
  changes: z.array(electionChange),
});
