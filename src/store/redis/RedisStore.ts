import type { Redis } from "@upstash/redis";
import { DEFAULT_STORE_TIMEOUT_MS, withDeadline } from "../../deadline";
import { FENCE_KEEP_MS, REQUEST_MEMORY_MS } from "../../limits";
import type {
  LockRef,
  LockStore,
  MutexAcquireInput,
  MutexAcquireResult,
  MutexHeartbeatResult,
  MutexReleaseResult,
  MutexState,
} from "../types";
import { mutexKeys } from "./keys";
import { luaScripts, type LuaScriptName } from "./scripts.generated";

type Reply = Array<string | number | null>;
type Script = ReturnType<Redis["createScript"]>;

export interface RedisStoreOptions {
  /** Bound on each store call; past it the call fails with StoreUnavailableError. */
  timeoutMs?: number;
}

/**
 * The Redis store: each operation is one Lua script run with EVALSHA (EVAL on
 * NOSCRIPT) through @upstash/redis, so one HTTP round trip to Upstash when
 * the script is cached. Works with any @upstash/redis client.
 */
export class RedisStore implements LockStore {
  readonly kind = "redis" as const;
  private readonly scripts = new Map<LuaScriptName, Script>();
  private readonly timeoutMs: number;

  constructor(
    private readonly redis: Redis,
    options: RedisStoreOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS;
  }

  async mutexAcquire(ref: LockRef, input: MutexAcquireInput): Promise<MutexAcquireResult> {
    const k = mutexKeys(ref);
    const r = await this.run("mutex_acquire", [k.lock, k.fence, k.request(input.requestId)], [
      input.token,
      input.ttlMs,
      input.reenter ? "reenter" : "new",
      input.watch ? "1" : "0",
      FENCE_KEEP_MS,
      REQUEST_MEMORY_MS,
    ]);
    if (r[0] === "granted") {
      return {
        status: "granted",
        grant: {
          name: ref.name,
          token: String(r[1]),
          fence: num(r[2]),
          ttlMs: num(r[3]),
          expiresAt: num(r[4]),
          count: num(r[5]),
        },
      };
    }
    if (r[0] === "busy") return { status: "busy", retryAfterMs: num(r[1]), expiresAt: num(r[2]) };
    return { status: "lost" };
  }

  async mutexHeartbeat(ref: LockRef, input: { token: string; ttlMs?: number }): Promise<MutexHeartbeatResult> {
    const k = mutexKeys(ref);
    const r = await this.run("mutex_heartbeat", [k.lock], [input.token, input.ttlMs ?? ""]);
    if (r[0] !== "ok") return { status: "lost" };
    return { status: "ok", expiresAt: num(r[1]), ttlMs: num(r[2]), fence: num(r[3]), watched: flag(r[4]) };
  }

  async mutexRelease(ref: LockRef, input: { token: string; requestId: string }): Promise<MutexReleaseResult> {
    const k = mutexKeys(ref);
    const r = await this.run("mutex_release", [k.lock, k.request(input.requestId)], [input.token, REQUEST_MEMORY_MS]);
    if (r[0] !== "ok") return { status: "lost" };
    return { status: "ok", released: flag(r[1]), count: num(r[2]), fence: num(r[3]), watched: flag(r[4]) };
  }

  async mutexInspect(ref: LockRef): Promise<MutexState> {
    const k = mutexKeys(ref);
    const r = await this.run("mutex_inspect", [k.lock, k.fence], []);
    return {
      held: flag(r[0]),
      fence: r[1] === "" || r[1] === null ? null : num(r[1]),
      count: num(r[2]),
      ttlMs: num(r[3]),
      expiresAt: r[4] === "" || r[4] === null ? null : num(r[4]),
    };
  }

  async ping(): Promise<void> {
    await withDeadline("ping", this.timeoutMs, () => this.redis.ping());
  }

  /** Runs one script: one EVALSHA round trip, plus one EVAL when Redis lost its script cache. */
  private run(name: LuaScriptName, keys: string[], args: Array<string | number>): Promise<Reply> {
    let script = this.scripts.get(name);
    if (!script) {
      script = this.redis.createScript(luaScripts[name]);
      this.scripts.set(name, script);
    }
    const s = script;
    return withDeadline(name, this.timeoutMs, async () => {
      const reply = await s.exec(keys, args.map(String));
      if (!Array.isArray(reply)) throw new Error(`unexpected reply from ${name}: ${JSON.stringify(reply)}`);
      return reply as Reply;
    });
  }
}

// Replies carry numbers as strings; a client with automatic deserialization
// may already have turned them into numbers. Number() accepts both.
function num(v: string | number | null): number {
  const n = Number(v);
  if (!Number.isFinite(n)) throw new Error(`expected a number from the store, got ${JSON.stringify(v)}`);
  return n;
}

function flag(v: string | number | null): boolean {
  return String(v) === "1";
}
