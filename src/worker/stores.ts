import { storeTimeoutMs } from "../deadline.js";
import { NotConfiguredError } from "../errors.js";
import type { Env } from "../env.js";
import { DurableStore } from "../store/durable/DurableStore.js";
import { lockObjectOf } from "../lockObject/lockObjectOf.js";
import { createUpstashClient } from "../store/redis/createUpstashClient.js";
import { libraryQuorumKinds } from "../library/kinds.js";
import { QuorumStoreCore, quorumListProblem } from "../store/quorum/QuorumStore.js";
import { RedisStoreCore } from "../store/redis/RedisStore.js";
import { kinds } from "./kinds.js";
import { luaScriptsFromAssets } from "./luaScriptAsset.js";
import type { LockStore } from "../store/types.js";

let cachedRedis: { key: string; store: RedisStoreCore | QuorumStoreCore } | undefined;

/**
 * The store outside the lock objects: a quorum when both UPSTASH_REDIS_REST_URLS
 * and _TOKENS are set, else the Redis store when both single Upstash settings
 * are, else undefined.
 * Built from the Worker's own configuration, in the Worker and in each lock
 * object alike, and kept per isolate (its client and script cache); nothing
 * of it is ever stored.
 */
export function redisStoreOf(env: Env): RedisStoreCore | QuorumStoreCore | undefined {
  if (env.UPSTASH_REDIS_REST_URLS && env.UPSTASH_REDIS_REST_TOKENS)
    return quorumStoreOf(env.UPSTASH_REDIS_REST_URLS, env.UPSTASH_REDIS_REST_TOKENS, storeTimeoutMs(env), env.ASSETS);
  const url = env.UPSTASH_REDIS_REST_URL;
  const token = env.UPSTASH_REDIS_REST_TOKEN;
  if (!url || !token) return undefined;
  const timeoutMs = storeTimeoutMs(env);
  const key = `${url} ${token} ${timeoutMs}`;
  if (cachedRedis?.key !== key) {
    const scriptTexts = luaScriptsFromAssets(env.ASSETS);
    cachedRedis = { key, store: new RedisStoreCore(createUpstashClient(url, token, timeoutMs), kinds, { timeoutMs, scriptTexts }) };
  }
  return cachedRedis.store;
}

function quorumStoreOf(urlList: string, tokenList: string, timeoutMs: number, assets: Env["ASSETS"]): QuorumStoreCore {
  const key = `quorum ${urlList} ${tokenList} ${timeoutMs}`;
  if (cachedRedis?.key !== key) {
    const urls = urlList.split(",").map((u) => u.trim());
    const tokens = tokenList.split(",").map((t) => t.trim());
    const problem = quorumListProblem(urls, tokens);
    if (problem !== undefined) throw new NotConfiguredError(problem);
    const store = new QuorumStoreCore(
      urls.map((url, i) => createUpstashClient(url, tokens[i], timeoutMs)),
      libraryQuorumKinds,
      { timeoutMs, scriptTexts: luaScriptsFromAssets(assets) },
    );
    cachedRedis = { key, store };
  }
  return cachedRedis.store as QuorumStoreCore;
}

/** The store the Worker uses: a quorum or Redis when configured, else the Durable store (each lock's LockObject). */
export function selectStore(env: Env): LockStore {
  return redisStoreOf(env) ?? durableStoreOf(env);
}

let cachedDurable: { objects: Env["LOCK_OBJECT"]; namespaces: Env["NAMESPACE_OBJECT"]; timeoutMs: number; store: DurableStore } | undefined;

/** The Durable store, kept per isolate like the Redis one: built again only when its bindings or deadline are not the last ones. */
function durableStoreOf(env: Env): DurableStore {
  const timeoutMs = storeTimeoutMs(env);
  const c = cachedDurable;
  if (c?.objects === env.LOCK_OBJECT && c.namespaces === env.NAMESPACE_OBJECT && c.timeoutMs === timeoutMs) return c.store;
  const objects = env.LOCK_OBJECT;
  const store = new DurableStore((kind, ref) => lockObjectOf(objects, kind, ref), {
    timeoutMs,
    namespaces: env.NAMESPACE_OBJECT,
    kinds: kinds.map((k) => k.name),
  });
  cachedDurable = { objects: env.LOCK_OBJECT, namespaces: env.NAMESPACE_OBJECT, timeoutMs, store };
  return store;
}
