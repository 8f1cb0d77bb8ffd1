import * as z from "zod/mini";
import { intFrom, newLeaseFields } from "../../wire/schemas.js";
import { FLOW_COUNT_MAX, FLOW_WINDOW_MAX_MS, FLOW_WINDOW_MIN_MS } from "./types.js";

/** An integer from min to max whose every problem is told in one sentence naming it (a field inside rate). */
const namedInt = (name: string, min: number, max: number) => {
  const error = `${name} must be a whole number from ${min} to ${max}`;
  return z.int({ error }).check(z.gte(min, { error }), z.lte(max, { error }));
};
const rate = z.strictObject({
  count: namedInt("count", 1, FLOW_COUNT_MAX),
  perMs: namedInt("perMs (the window, in ms)", FLOW_WINDOW_MIN_MS, FLOW_WINDOW_MAX_MS),
});
const limitOut = z.object({ concurrency: z.optional(z.int()), rate: z.optional(z.object({ count: z.int(), perMs: z.int() })) });

/** The flow limit's request and response schemas: the routes validate with them, the OpenAPI document is made from them. */
export const flowAcquireBody = z
  .strictObject({
    /** At most this many slots held at once. */
    concurrency: z.optional(intFrom(1, FLOW_COUNT_MAX)),
    /** At most `count` grants in any window of `perMs`. */
    rate: z.optional(rate),
    ...newLeaseFields,
  })
  .check(
    z.superRefine((body, ctx) => {
      if (body.concurrency === undefined && body.rate === undefined) {
        ctx.addIssue({ code: "custom", path: ["concurrency"], message: "or rate is required: a flow limit needs at least one of them" });
      }
    }),
  );

export const flowGrant = z.object({
  name: z.string(),
  token: z.string(),
  fence: z.int(),
  ttlMs: z.int(),
  expiresAt: z.int(),
  /** When it was granted, on the store's clock: the start its rate counts. */
  startedAt: z.int(),
  /** Slots held after this grant, its own counted. */
  held: z.int(),
  /** Grants in the window ending at this one, its own counted (null without a rate). */
  starts: z.nullable(z.int()),
});
export const flowReleaseResponse = z.object({ released: z.literal(true), held: z.int() });
export const flowStateResponse = z.object({
  name: z.string(),
  /** The limit in force (its holders', or its window's starts'); null when none is. */
  limit: z.nullable(limitOut),
  held: z.int(),
  /** The labels of the first holders to end (at most 10; holders without one left out). */
  holderLabels: z.array(z.string()),
  /** When the first holder's lease ends (null when nobody holds). */
  expiresAt: z.nullable(z.int()),
  /** Grants in the window ending now (null without a rate). */
  starts: z.nullable(z.int()),
  /** When the window admits the next start (null when it does now, or without a rate). */
  nextStartAt: z.nullable(z.int()),
  waiters: z.int(),
});
