import type { Redis } from "@upstash/redis";
import { DEFAULT_STORE_TIMEOUT_MS, withDeadline } from "../../deadline.js";
import { InternalError, NotConfiguredError } from "../../errors.js";
import { classifyRedisFault } from "./redisFaults.js";
import { failWhenRefused, storeUrlOf } from "./refusedStore.js";
import { luaScriptSha1, luaScriptTakesCallerClock, plainScript, plainScriptSha1, type LuaScriptName } from "./scripts.generated.js";

/**
 * A script's text, asked only when Redis lacks the script (NOSCRIPT: a new or
 * flushed database): the library's come from the generated module
 * (moduleScripts.ts), the Worker's from its static assets
 * (src/worker/luaScriptAsset.ts), so its bundle carries none.
 */
export type ScriptTexts = (name: LuaScriptName) => string | Promise<string>;

/** A script's reply: its name/value pairs (see lua/prelude.lua). */
export type ScriptReply = Readonly<Record<string, string>>;

/**
 * Clients whose Redis refused the scripts' `allow-key-locking` flag: stock
 * Redis (7.0 names the flag unknown, older ones cannot parse the shebang),
 * typically behind a REST proxy for local development. They get every script
 * without its flag line from then on. Kept per client, not per runner, so the
 * library's many primitives over one client learn it once.
 */
const refusesKeyLocking = new WeakSet<Redis>();

/**
 * Runs the lock kinds' Lua scripts through @upstash/redis: EVALSHA, and EVAL
 * when Redis lost its script cache, so one HTTP round trip once cached.
 * Every script asks Upstash to lock only its KEYS (its first line,
 * tools/gen-lua-scripts.mjs); a Redis that refuses that flag is noticed once
 * per client and sent the scripts without it. Replies are decoded by name,
 * and every failure is sorted into an outage or a bug before it leaves here.
 */
export class ScriptRunner {
  readonly timeoutMs: number;

  /**
   * @param texts  where a script's text comes from when Redis lacks it
   * @param notesWatchers  the Worker's runner: a write handed its lock's watchers key passes it as
   *   the script's last key, and the script answers watchers "1" while it exists (watchedResults.ts)
   */
  constructor(
    readonly redis: Redis,
    readonly texts: ScriptTexts,
    timeoutMs?: number,
    readonly notesWatchers = false,
  ) {
    this.timeoutMs = timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS;
    this.missing = missingSetting(redis);
    this.url = storeUrlOf(redis);
  }

  /** Where the client sends (named when nothing listens there). */
  private readonly url: string | undefined;

  /** What the client lacks to reach a database (no URL, no token): every call says so at once, not after its deadline. */
  private readonly missing: string | undefined;

  /** Runs a script; `watchers`, a write's lock's watchers key, goes last in KEYS only on the Worker's runner. */
  run(name: LuaScriptName, keys: string[], args: Array<string | number>, watchers?: string): Promise<ScriptReply> {
    if (watchers !== undefined && this.notesWatchers) keys = [...keys, watchers];
    const argv = args.map(String);
    // The caller's clock goes last, for the scripts that issue fences: a floor for them, taken off by the
    // prelude (lua/prelude.lua, fence_floor); the others do without the argument.
    if (luaScriptTakesCallerClock[name]) argv.push(String(Date.now() * 1000));
    // Promise steps, not async functions: every store call comes this way, and each async frame is
    // garbage more per call. A reply that is not name/value pairs throws from pairsOf, past the fault
    // sorting: a bug, not an outage.
    return withDeadline(name, this.timeoutMs, () => failWhenRefused(this.redis, name, this.evalsha(name, keys, argv))).then(
      (reply) => pairsOf(name, reply),
      (err) => {
        throw classifyRedisFault(name, err, this.url);
      },
    );
  }

  /** EVALSHA, and EVAL when Redis does not have the script (a new or flushed database). */
  private evalsha(name: LuaScriptName, keys: string[], argv: string[]): Promise<unknown> {
    if (this.missing) return Promise.reject(new NotConfiguredError(this.missing));
    if (refusesKeyLocking.has(this.redis)) return this.evalshaPlain(name, keys, argv);
    return this.redis.evalsha(luaScriptSha1[name], keys, argv).catch((err: unknown) => this.evalOnNoScript(name, keys, argv, err));
  }

  /** After a failed EVALSHA: EVAL on NOSCRIPT (any other failure passes on); a refused flag is learnt for the client. */
  private async evalOnNoScript(name: LuaScriptName, keys: string[], argv: string[], err: unknown): Promise<unknown> {
    if (!isNoScript(err)) throw err;
    const script = await this.texts(name);
    try {
      return await this.redis.eval(script, keys, argv);
    } catch (err) {
      if (!refusesFlag(err)) throw err;
      refusesKeyLocking.add(this.redis);
      return await this.redis.eval(plainScript(script), keys, argv);
    }
  }

  /** The same for a Redis that refuses the flag: the script without its flag line. */
  private async evalshaPlain(name: LuaScriptName, keys: string[], argv: string[]): Promise<unknown> {
    try {
      return await this.redis.evalsha(plainScriptSha1[name], keys, argv);
    } catch (err) {
      if (!isNoScript(err)) throw err;
      return await this.redis.eval(plainScript(await this.texts(name)), keys, argv);
    }
  }

  async ping(): Promise<void> {
    await this.command("ping", (redis) => redis.ping());
  }

  /** A plain Redis command (no script): under the same deadline, its failure sorted the same way. */
  async command<T>(what: string, call: (redis: Redis) => Promise<T>): Promise<T> {
    if (this.missing) throw new NotConfiguredError(this.missing);
    try {
      return await withDeadline(what, this.timeoutMs, () => failWhenRefused(this.redis, what, call(this.redis)));
    } catch (err) {
      throw classifyRedisFault(what, err, this.url);
    }
  }
}

/**
 * An @upstash/redis client made without a URL or token (`Redis.fromEnv()` with the variables unset warns,
 * then waits for a network that is not there): what it lacks, in words that name the settings.
 */
function missingSetting(redis: Redis): string | undefined {
  const client = (redis as unknown as { client?: { baseUrl?: unknown; headers?: { authorization?: unknown } } }).client;
  if (!client || typeof client !== "object") return undefined;
  if (client.baseUrl === "") {
    return "the Redis client has no URL: set UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN (Redis.fromEnv() reads them), or give new Redis({ url, token })";
  }
  const auth = client.headers?.authorization;
  // "Bearer undefined": Redis.fromEnv() with UPSTASH_REDIS_REST_TOKEN unset (@upstash/redis 1.39 warns, then sends that).
  if (typeof auth === "string" && /^Bearer(\s+undefined)?$/.test(auth.trim())) {
    return "the Redis client has no token: set UPSTASH_REDIS_REST_TOKEN (Redis.fromEnv() reads it), or give new Redis({ url, token })";
  }
  return undefined;
}

function isNoScript(err: unknown): boolean {
  return err instanceof Error && /NOSCRIPT/i.test(err.message);
}

/**
 * Redis refused the scripts' first line: 7.0 knows shebangs but not Upstash's
 * flag; before 7.0 a shebang does not compile.
 */
function refusesFlag(err: unknown): boolean {
  return err instanceof Error && /Unexpected flag in script shebang: allow-key-locking|user_script:1: unexpected symbol near '#'/.test(err.message);
}

/** The reply as a list: JSON text (a client that does not parse replies), or already parsed. */
function listOf(reply: unknown): unknown {
  if (typeof reply !== "string") return reply;
  try {
    return JSON.parse(reply);
  } catch {
    return reply;
  }
}

function pairsOf(name: string, raw: unknown): ScriptReply {
  const reply = listOf(raw);
  if (!Array.isArray(reply) || reply.length % 2 !== 0) {
    throw new InternalError(`${name} answered ${JSON.stringify(reply)?.slice(0, 200)}, not name/value pairs`);
  }
  const out: Record<string, string> = {};
  for (let i = 0; i < reply.length; i += 2) out[String(reply[i])] = reply[i + 1] === null ? "" : String(reply[i + 1]);
  return out;
}

/** A number field of a reply; a missing or malformed one is a bug, not an outage. */
export function numberField(reply: ScriptReply, field: string): number {
  const n = Number(reply[field]);
  if (reply[field] === undefined || reply[field] === "" || !Number.isFinite(n)) {
    throw new InternalError(`expected a number in field ${field} of ${JSON.stringify(reply).slice(0, 200)}`);
  }
  return n;
}

/** A number field that may be empty (""): null then. */
export function optionalNumberField(reply: ScriptReply, field: string): number | null {
  return reply[field] === "" || reply[field] === undefined ? null : numberField(reply, field);
}

export function unexpectedReply(name: string, reply: ScriptReply): InternalError {
  return new InternalError(`${name} answered an unexpected ${JSON.stringify(reply).slice(0, 200)}`);
}
