import { env } from "cloudflare:test";
import { Redis } from "@upstash/redis/cloudflare";
import { describe, expect, it } from "vitest";
import ACQUIRE_01_SOURCE from "./fixtures/acquire-0.1.lua?raw";
import { api, KEY_ADMIN, uniqueName } from "../../support/workers/api";
import { newReceiver } from "../../support/workers/lockObjectHelpers";

/**
 * 0.1 meets 0.2 on one Redis (test/kinds/mutex/upgrade.test.ts) where 0.2 is
 * the Worker: its releases run lua/mutex/release.lua (the library's usual
 * release runs release_unwatched.lua), on each path a release takes there: a
 * lease of the four usual fields, one watched for onExpire, one with a
 * lock-delay, and an operator's force release. Each marks the freed lock
 * released (owner "", exp "0") rather than deleting the lease, so a 0.1
 * process (fixtures/acquire-0.1.lua, the script 0.1.0 ran) reads it as held
 * and never grants it, so never with a fence below 0.2's.
 */
const redis = new Redis({ url: env.TEST_UPSTASH_URL, token: env.TEST_UPSTASH_TOKEN, automaticDeserialization: false });
const ACQUIRE_01 = ACQUIRE_01_SOURCE.replace(/^#!.*\n/, "");
const { post } = api("redis");
const path = (name: string, op = "") => `/v1/locks/${name}${op ? `/${op}` : ""}`;

/** A 0.1 process's try-lock of tenant-a's lock `name`: its four keys, a token, a ttl and its clock in µs. */
async function acquire01(name: string): Promise<Record<string, string>> {
  const k = `hf:{mx:tenant-a:${name}}`;
  const reply = await redis.eval(ACQUIRE_01, [k, `${k}:fence`, `${k}:next`, `${k}:delay`], ["hf_v01_process", "5000", String(Date.now() * 1000)]);
  const list = JSON.parse(String(reply)) as string[];
  return Object.fromEntries(list.flatMap((v, i) => (i % 2 === 0 ? [[v, list[i + 1]]] : [])));
}

describe("0.1 meets the Worker's releases on one Redis", () => {
  const releases = {
    "a Worker's release": async (name: string, token: string) => post(path(name, "release"), { token }),
    "a force release": async (name: string) => post(path(name, "force-release"), { reason: "upgrade test" }, { key: KEY_ADMIN }),
  };
  const leases = {
    "a plain lease": async () => ({}),
    "a lease watched for onExpire": async () => ({ onExpire: (await newReceiver()).url }),
    "a lease with a lock-delay": async () => ({ lockDelayMs: 60_000 }),
  };

  for (const [leaseLabel, options] of Object.entries(leases)) {
    for (const [releaseLabel, release] of Object.entries(releases)) {
      it(`${releaseLabel} of ${leaseLabel} leaves the lock held to 0.1, and 0.2's next grant has a larger fence`, async () => {
        const name = uniqueName("upgrade-worker");
        const held = await post(path(name, "acquire"), { ttlMs: 30_000, ...(await options()) });
        expect(held.status).toBe(200);
        const released = await release(name, held.body.token);
        expect(released.status).toBe(200);
        expect(await acquire01(name)).toMatchObject({ status: "busy" });
        // Free to 0.2 (a release ends a lock-delay): the next grant, with a larger fence; still held to 0.1.
        const next = await post(path(name, "acquire"), { ttlMs: 30_000 });
        expect(next.status).toBe(200);
        expect(next.body.fence).toBeGreaterThan(held.body.fence);
        expect(await acquire01(name)).toMatchObject({ status: "busy" });
        await post(path(name, "release"), { token: next.body.token });
      });
    }
  }
});
