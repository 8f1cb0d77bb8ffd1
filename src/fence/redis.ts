import { checkFence, checkResource, checkStoredFence, describe } from "./check.js";
import { FenceInputError, StaleFenceError } from "./errors.js";
import { CLAIM, DEL, HSET, INCRBY, SET, userScript } from "./redisScripts.js";
import type { FenceClaimer } from "./types.js";

/**
 * What the Redis fence needs of a client: @upstash/redis's `Redis` (from
 * "@upstash/redis", "@upstash/redis/cloudflare" or "/fastly") has both.
 */
export interface FenceRedis {
  evalsha(sha: string, keys: string[], args: string[]): Promise<unknown>;
  eval(script: string, keys: string[], args: string[]): Promise<unknown>;
}

/** The most fields one fenced HSET takes (they go through Lua's unpack, whose stack is limited). */
export const MAX_HSET_FIELDS = 1000;

/**
 * Where a resource's fence is kept: a key beside it, in the same Redis Cluster
 * slot, that no other resource maps to. The three forms differ in the
 * character after "holdfast:fence", so no two resources share a fence key:
 * - the key has a hash tag ("{orders}:42"): that tag hashes it, so any text
 *   around the key keeps the slot: "holdfast:fence:{orders}:42";
 * - it has none and no "}" ("orders:42"): the whole key hashes it, and so does
 *   the key made its fence key's tag: "holdfast:fence{orders:42}";
 * - it has none but has a "}" ("a}b", "x{}y"): no key but itself hashes like
 *   it, so the fence key is "holdfast:fence=a}b", in another slot. Fine on
 *   Upstash and a single Redis; on Redis Cluster a CROSSSLOT error: give such a
 *   key a hash tag.
 */
export function fenceKeyOf(resource: string): string {
  if (hashTagOf(resource) !== undefined) return `holdfast:fence:${resource}`;
  if (!resource.includes("}")) return `holdfast:fence{${resource}}`;
  return `holdfast:fence=${resource}`;
}

/** A resource's key, checked: any name but one the fences' keys could have. */
function resourceKey(resource: string): string {
  const r = checkResource(resource);
  if (r.startsWith("holdfast:fence"))
    throw new FenceInputError("invalid_resource", "resource", 'keys starting with "holdfast:fence" are the fences\' own');
  return r;
}

/** Redis Cluster's hash tag: between the first "{" and the first "}" after it, if not empty. */
function hashTagOf(key: string): string | undefined {
  const open = key.indexOf("{");
  if (open < 0) return undefined;
  const close = key.indexOf("}", open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : undefined;
}

/**
 * Fenced writes to Redis keys, over @upstash/redis: each write is applied only
 * when its fence is at least the highest the key has seen, checked and written
 * in one Lua script (one round trip), and the fence recorded beside the key
 * (fenceKeyOf). An older fence gets StaleFenceError and nothing is written;
 * bad arguments get FenceInputError before anything is sent; a stored fence
 * that is not one gets corrupt_fence and is left as it is.
 *
 * Run twice with the same fence (a retry after a lost answer): SET, HSET, DEL
 * and claim leave the same state (idempotent); INCRBY and eval apply twice,
 * as the same command would without a fence (the fence orders holders, it
 * does not remember requests: use holdfast's Idempotency for that).
 */
export class RedisFence implements FenceClaimer {
  constructor(readonly redis: FenceRedis) {}

  /** Record that `fence` owns `resource` (see FenceClaimer); answers the fence it had before, or null. */
  async claim(resource: string, fence: number): Promise<{ previous: number | null }> {
    const r = resourceKey(resource);
    const reply = await this.run(CLAIM, r, [fenceKeyOf(r)], [String(checkFence(fence))]);
    return { previous: reply === "" || reply === null ? null : checkStoredFence(String(reply), r) };
  }

  /** SET resource value, if `fence` holds. The value: a string, or a finite number (stored as its text). */
  async set(resource: string, fence: number, value: string | number): Promise<void> {
    const r = resourceKey(resource);
    await this.run(SET, r, [fenceKeyOf(r), r], [String(checkFence(fence)), valueText(value, "value")]);
  }

  /** DEL resource, if `fence` holds; answers how many keys went (0 or 1). The fence key stays. */
  async del(resource: string, fence: number): Promise<number> {
    const r = resourceKey(resource);
    return Number(await this.run(DEL, r, [fenceKeyOf(r), r], [String(checkFence(fence))]));
  }

  /** HSET resource field value ..., if `fence` holds; answers how many fields are new. */
  async hset(resource: string, fence: number, fields: Record<string, string | number>): Promise<number> {
    const r = resourceKey(resource);
    const f = String(checkFence(fence));
    const pairs = fieldPairs(fields);
    return Number(await this.run(HSET, r, [fenceKeyOf(r), r], [f, ...pairs]));
  }

  /** INCRBY resource by, if `fence` holds; answers the new value. `by`: a safe integer. */
  async incrby(resource: string, fence: number, by: number): Promise<number> {
    const r = resourceKey(resource);
    const f = String(checkFence(fence));
    if (!Number.isSafeInteger(by)) throw new FenceInputError("invalid_value", "by", `by must be a safe integer, got ${describe(by)}`);
    return Number(await this.run(INCRBY, r, [fenceKeyOf(r), r], [f, String(by)]));
  }

  /**
   * Your Lua, run only if `fence` holds for `resource`, in the same script as
   * the check: it sees KEYS (`keys`) and ARGV (`args`) as if run alone, and
   * must touch only those keys (Upstash's key locking refuses others). Answers
   * what it returns, as your client decodes an EVAL's reply.
   */
  async eval(resource: string, fence: number, script: string, keys: string[] = [], args: Array<string | number> = []): Promise<unknown> {
    const r = resourceKey(resource);
    const f = String(checkFence(fence));
    if (typeof script !== "string" || script.trim() === "" || script.startsWith("#!")) {
      throw new FenceInputError("invalid_value", "script", "script must be a Lua body (not empty, no #! line: the flags are the fence's)");
    }
    if (!Array.isArray(keys) || keys.some((k) => typeof k !== "string" || k === "")) {
      throw new FenceInputError("invalid_value", "keys", "keys must be an array of non-empty strings");
    }
    if (!Array.isArray(args)) throw new FenceInputError("invalid_value", "args", "args must be an array");
    const argv = args.map((a, i) => valueText(a, `args[${i}]`));
    return await this.run(userScript(script), r, [fenceKeyOf(r), ...keys], [f, ...argv]);
  }

  /** Runs one fence script; answers its 'ok' reply's value, or throws what the resource said. */
  private async run(script: string, resource: string, keys: string[], args: string[]): Promise<unknown> {
    const reply = await evalScript(this.redis, script, keys, args);
    if (!Array.isArray(reply) || typeof reply[0] !== "string") {
      throw new Error(`holdfast/fence: the script answered ${describe(reply)}, not a fence reply`);
    }
    if (reply[0] === "ok") return reply[1] ?? null;
    if (reply[0] === "stale") throw new StaleFenceError(resource, Number(args[0]), checkStoredFence(String(reply[1]), resource));
    if (reply[0] === "corrupt") throw corruptFence(resource, reply[1]);
    throw new Error(`holdfast/fence: the script answered ${describe(reply[0])}, not a fence reply`);
  }
}

/** The script found something other than a fence where the resource's fence is kept (the client may have JSON-parsed it). */
function corruptFence(resource: string, found: unknown): FenceInputError {
  const what = typeof found === "string" ? found : JSON.stringify(found);
  return new FenceInputError(
    "corrupt_fence",
    "resource",
    `the fence stored for resource ${JSON.stringify(resource)} is not a fence (${describe(what)}): refused, not overwritten`,
  );
}

function valueText(value: unknown, field: string): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  throw new FenceInputError("invalid_value", field, `${field} must be a string or a finite number, got ${describe(value)}`);
}

function fieldPairs(fields: unknown): string[] {
  if (fields === null || typeof fields !== "object" || Array.isArray(fields)) {
    throw new FenceInputError("invalid_value", "fields", `fields must be an object of field -> value, got ${describe(fields)}`);
  }
  const entries = Object.entries(fields);
  if (entries.length === 0 || entries.length > MAX_HSET_FIELDS) {
    throw new FenceInputError("invalid_value", "fields", `fields must have 1 to ${MAX_HSET_FIELDS} entries, got ${entries.length}`);
  }
  return entries.flatMap(([k, v]) => [k, valueText(v, `fields.${k}`)]);
}

/**
 * Clients whose Redis refused the key-locking flag (stock Redis behind a REST
 * proxy): sent every fence script without its first line from then on, as
 * the lock scripts are (src/store/redis/ScriptRunner.ts).
 */
const refusesKeyLocking = new WeakSet<object>();
/** Digests of the scripts sent lately: ours (a few) and callers' eval bodies (bounded). */
const digests = new Map<string, Promise<string>>();
const MAX_DIGESTS = 256;

/** EVALSHA, and EVAL when Redis does not have the script yet: one round trip once cached. */
async function evalScript(redis: FenceRedis, flagged: string, keys: string[], args: string[]): Promise<unknown> {
  const script = refusesKeyLocking.has(redis) ? flagged.slice(flagged.indexOf("\n")) : flagged;
  try {
    return await redis.evalsha(await sha1Of(script), keys, args);
  } catch (err) {
    if (!(err instanceof Error && /NOSCRIPT/i.test(err.message))) throw err;
  }
  try {
    return await redis.eval(script, keys, args);
  } catch (err) {
    const refused = err instanceof Error && /Unexpected flag in script shebang|user_script:1: unexpected symbol near '#'/.test(err.message);
    if (!refused || script !== flagged) throw err;
    refusesKeyLocking.add(redis);
    return await evalScript(redis, flagged, keys, args);
  }
}

function sha1Of(text: string): Promise<string> {
  let digest = digests.get(text);
  if (!digest) {
    if (digests.size >= MAX_DIGESTS) digests.delete(digests.keys().next().value as string);
    digest = crypto.subtle
      .digest("SHA-1", new TextEncoder().encode(text))
      .then((d) => [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, "0")).join(""));
    digests.set(text, digest);
  }
  return digest;
}
