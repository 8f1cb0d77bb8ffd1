import { env, runInDurableObject } from "cloudflare:test";
import { describe } from "vitest";
import type { KindName } from "../../src/store/kinds";
import { kinds } from "../../src/worker/kinds";
import { localStoreOf } from "../../src/lockObject/LocalStore";
import { lockObjectOf } from "../../src/lockObject/lockObjectOf";
import { createUpstashClient } from "../../src/store/redis/createUpstashClient";
import { RedisStore } from "../../src/library/RedisStore";
import { kindOps, type LockRef } from "../../src/store/types";
import type { WorkerStore } from "../../src/worker/kinds";
import { runContractCases } from "./index";

/**
 * The store-boundary contract, run on both stores: the Redis store (every
 * operation one Lua script, through the real @upstash/redis client to the
 * test gateway) and the Durable store's rules run on the lock object's own
 * storage (LocalStore inside that object, by runInDurableObject): the same
 * cases, the same expected answers, no HTTP and no line in between.
 */

/**
 * The Durable store as its lock objects run it: each operation runs in the
 * lock object of its (kind, namespace, name), on that object's storage, as
 * LockObject.run does for the Worker's DurableStore, less the RPC and the
 * kind's object part (a release's handover to the line is not in this contract).
 */
function durableOnLockObjects(): WorkerStore {
  const kindOf = (kind: KindName) =>
    new Proxy(
      {},
      {
        get:
          (_t, op: string) =>
          (ref: LockRef, ...args: unknown[]) =>
            runInDurableObject(lockObjectOf(env.LOCK_OBJECT, kind, ref), (_object, state) => {
              const ops = kindOps(localStoreOf(state.storage.kv, kinds), kind) as Record<string, (...a: unknown[]) => Promise<unknown>>;
              return ops[op](ref, ...args);
            }),
      },
    );
  return { kind: "durable", ping: async () => {}, ...Object.fromEntries(kinds.map((k) => [k.name, kindOf(k.name)])) } as unknown as WorkerStore;
}

const redisStore = () => new RedisStore(createUpstashClient(env.TEST_UPSTASH_URL, env.TEST_UPSTASH_TOKEN, 5000));

describe("redis store (Lua scripts)", () => runContractCases({ newStore: redisStore }));
describe("durable store (the lock object's storage)", () => runContractCases({ newStore: durableOnLockObjects }));
