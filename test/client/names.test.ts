// holdfast/client refuses what is not a name before it sends anything, with the service's own answer
// (400 invalid_name): "." and ".." would be dropped from the URL and reach another route, and a name over
// 200 characters is said to be too long. baseUrl is a port where nothing listens: a request sent would
// be UnreachableError, so each answer here is the client's own.
import { Redis } from "@upstash/redis";
import { beforeAll, expect, inject, it } from "vitest";
import { idempotent, InvalidInputError, Mutex } from "holdfast";
import { HoldfastClient, InvalidRequestError } from "../../src/client/index";
import { closedPort } from "../support/closedPort";

let client: HoldfastClient;
beforeAll(async () => {
  client = new HoldfastClient({ baseUrl: `http://127.0.0.1:${await closedPort()}`, apiKey: "holdfast-local-dev-key" });
});

const refusal = (message: RegExp) => expect.objectContaining({ code: "invalid_name", status: 400, message: expect.stringMatching(message) });

it('"." and ".." are refused as names and keys on every call, 400 invalid_name', async () => {
  for (const name of [".", ".."]) {
    for (const call of [
      () => client.lock(name, { ttlMs: 1000 }),
      () => client.readLock(name, { ttlMs: 1000 }),
      () => client.semaphore(name, { ttlMs: 1000, limit: 2 }),
      () => client.inspect(name),
      () => client.runOnce(name, async () => 1, { ttlMs: 1000 }),
      () => client.begin(name, { ttlMs: 1000 }),
      () => client.operator.forceRelease("mutex", name, { reason: "stuck" }),
    ]) {
      const err = await call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidRequestError);
      expect(err).toEqual(refusal(/may not be "\." or "\.\."/));
    }
  }
});

it("a name over 200 characters is too long, its length said, on the client and in the library alike", async () => {
  const long = "n".repeat(201);
  await expect(client.lock(long, { ttlMs: 1000 })).rejects.toEqual(refusal(/^names are at most 200 characters; this one is too long \(201\)$/));
  const redis = new Redis({ url: inject("upstashUrl"), token: inject("upstashToken") });
  expect(() => new Mutex(redis, long)).toThrow(InvalidInputError);
  expect(() => new Mutex(redis, long)).toThrow(/names are at most 200 characters; this one is too long \(201\)/);
});

it('idempotent(handler, { client }) answers a key "." or ".." 400 invalid_name, as over Redis, and the handler does not run', async () => {
  let runs = 0;
  const handler = async () => {
    runs++;
    return new Response("ran");
  };
  const overService = idempotent(handler, { client, ttlMs: 5000 });
  const overRedis = idempotent(handler, { redis: new Redis({ url: inject("upstashUrl"), token: inject("upstashToken") }), ttlMs: 5000 });
  for (const key of [".", ".."]) {
    const answers = [];
    for (const wrapped of [overService, overRedis]) {
      const res = await wrapped(new Request("https://app.test/hooks", { method: "POST", headers: { "idempotency-key": key }, body: "{}" }));
      answers.push({ status: res.status, error: ((await res.json()) as { error: string }).error });
    }
    expect(answers).toEqual([
      { status: 400, error: "invalid_name" },
      { status: 400, error: "invalid_name" },
    ]);
  }
  expect(runs).toBe(0);
});
