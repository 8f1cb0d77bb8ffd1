/**
 * Listing on the Redis store while the database churns: other keys come and
 * go by the tens of thousands (Redis grows and shrinks its table meanwhile),
 * as on a busy Upstash database, and a listing paged with small limits must
 * still hold each page to its limit, end, and name every lock held
 * throughout (src/store/redis/redisOperator.ts). A redis-server of its own,
 * so the churn reaches no other test.
 */
import { Redis } from "@upstash/redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Mutex, RedisStore } from "holdfast";
import { startLocalStack } from "../../../tools/local-stack/stack.mjs";
import type { LocalStack } from "../../../tools/local-stack/stack.mjs";

const NS = "churn";
const HELD = 200;
/** Other keys written per call, and how many stand before they are all deleted again (the table shrinks). */
const CHURN_BATCH = 500;
const CHURN_WAVE = 20_000;

let stack: LocalStack;
let redis: Redis;

beforeAll(async () => {
  stack = await startLocalStack();
  redis = new Redis({ url: stack.url, token: stack.token, enableTelemetry: false, enableAutoPipelining: false });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

/** Writes and deletes other keys until stopped; resolves with how many it wrote. */
function churn(): { stop: () => Promise<number> } {
  let going = true;
  let made = 0;
  const done = (async () => {
    while (going) {
      const batch = Array.from({ length: CHURN_BATCH }, (_, i) => `other:${made + i}`);
      await redis.mset(Object.fromEntries(batch.map((k) => [k, "x"])));
      made += CHURN_BATCH;
      if (made % CHURN_WAVE === 0) {
        for (let from = made - CHURN_WAVE; from < made; from += CHURN_BATCH) {
          await redis.del(...Array.from({ length: CHURN_BATCH }, (_, i) => `other:${from + i}`));
        }
      }
    }
    return made;
  })();
  return {
    stop: async () => {
      going = false;
      return done;
    },
  };
}

describe("Redis listing while other keys churn", () => {
  it("pages every held lock within its limit, and ends", { timeout: 120_000 }, async () => {
    // What the case is about is the listing's pages, not a deadline: 50 acquires at once and pages read
    // beside the churn passed the 2 s default on a busy 2-core runner.
    const store = new RedisStore(redis, { timeoutMs: 20_000 });
    const names = Array.from({ length: HELD }, (_, i) => `keep-${String(i).padStart(3, "0")}`);
    for (let i = 0; i < names.length; i += 50) {
      await Promise.all(names.slice(i, i + 50).map((name) => new Mutex(store, name, { namespace: NS }).acquire({ ttlMs: 600_000 })));
    }
    const churner = churn();
    try {
      for (const limit of [1, 5, 25]) {
        const seen = new Set<string>();
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await store.operator.names(NS, "mutex", { prefix: "keep-", limit, cursor });
          expect(page.names.length, `a page of limit ${limit}`).toBeLessThanOrEqual(limit);
          for (const name of page.names) seen.add(name);
          cursor = page.cursor ?? undefined;
          pages++;
          // A listing that goes round in circles (a page answering the same names again and again) must not pass.
          expect(pages, `pages of limit ${limit}`).toBeLessThan((3 * HELD) / limit + 100);
        } while (cursor);
        expect(
          names.filter((name) => !seen.has(name)),
          `held locks missed with limit ${limit}`,
        ).toEqual([]);
      }
    } finally {
      const made = await churner.stop();
      // The churn was real: it wrote at least one whole wave (grow, then delete) while the listings ran.
      expect(made).toBeGreaterThanOrEqual(CHURN_WAVE);
    }
  });
});
