import type { Redis } from "@upstash/redis";
import { DEFAULT_STORE_TIMEOUT_MS, withDeadline } from "../../deadline.js";
import { InternalError } from "../../errors.js";
import { classifyRedisFault } from "./redisFaults.js";
import { luaScriptSha1, luaScripts, type LuaScriptName } from "./scripts.generated.js";

/** A script's reply: its name/value pairs (see lua/prelude.lua). */
export type ScriptReply = Readonly<Record<string, string>>;

/**
 * Runs the lock kinds' Lua scripts through @upstash/redis: EVALSHA, and EVAL
 * when Redis lost its script cache, so one HTTP round trip once cached.
 * Replies are decoded by name, and every failure is sorted into an outage or
 * a bug before it leaves here.
 */
export class ScriptRunner {
  readonly timeoutMs: number;

  constructor(
    readonly redis: Redis,
    timeoutMs?: number,
  ) {
    this.timeoutMs = timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS;
  }

  async run(name: LuaScriptName, keys: string[], args: Array<string | number>): Promise<ScriptReply> {
    const argv = args.map(String);
    // The caller's clock goes last: a floor for fences, taken off by the prelude (lua/prelude.lua).
    argv.push(String(Date.now() * 1000));
    let reply: unknown;
    try {
      reply = await withDeadline(name, this.timeoutMs, () => this.evalsha(name, keys, argv));
    } catch (err) {
      throw classifyRedisFault(name, err);
    }
    return pairsOf(name, reply);
  }

  /** EVALSHA, and EVAL when Redis does not have the script (a new or flushed database). */
  private async evalsha(name: LuaScriptName, keys: string[], argv: string[]): Promise<unknown> {
    try {
      return await this.redis.evalsha(luaScriptSha1[name], keys, argv);
    } catch (err) {
      if (!(err instanceof Error) || !/NOSCRIPT/i.test(err.message)) throw err;
      return await this.redis.eval(luaScripts[name], keys, argv);
    }
  }

  async ping(): Promise<void> {
    try {
      await withDeadline("ping", this.timeoutMs, () => this.redis.ping());
    } catch (err) {
      throw classifyRedisFault("ping", err);
    }
  }
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
