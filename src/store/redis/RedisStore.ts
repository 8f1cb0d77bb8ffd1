import type { Redis } from "@upstash/redis";
import { DEFAULT_STORE_TIMEOUT_MS, withDeadline } from "../../deadline";
import { FENCE_KEEP_MS, REQUEST_MEMORY_MS } from "../../limits";
import type {
  IdempotencyBeginInput,
  IdempotencyBeginResult,
  IdempotencyCompleteResult,
  IdempotencyFailResult,
  IdempotencyHeartbeatResult,
  IdempotencyState,
  LockRef,
  LockStore,
  MutexAcquireInput,
  MutexAcquireResult,
  MutexHeartbeatResult,
  MutexReleaseResult,
  MutexState,
} from "../types";
import { idempotencyKeys, mutexKeys } from "./keys";
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

  async idempotencyBegin(ref: LockRef, input: IdempotencyBeginInput): Promise<IdempotencyBeginResult> {
    const k = idempotencyKeys(ref);
    const r = await this.run("idempotency_begin", [k.record, k.fence, k.request(input.requestId)], [
      input.token,
      input.ttlMs,
      input.retainMs,
      input.fingerprint ?? "",
      FENCE_KEEP_MS,
      REQUEST_MEMORY_MS,
    ]);
    switch (r[0]) {
      case "started":
        return { status: "started", token: String(r[1]), fence: num(r[2]), ttlMs: num(r[3]), expiresAt: num(r[4]) };
      case "completed":
        return { status: "completed", response: storedResponse(r[1]), completedAt: num(r[2]), fence: num(r[3]) };
      case "in_progress":
        return { status: "in_progress", retryAfterMs: num(r[1]), expiresAt: num(r[2]) };
      default:
        return { status: "mismatch" };
    }
  }

  async idempotencyHeartbeat(ref: LockRef, input: { token: string; ttlMs?: number }): Promise<IdempotencyHeartbeatResult> {
    const r = await this.run("idempotency_heartbeat", [idempotencyKeys(ref).record], [input.token, input.ttlMs ?? ""]);
    if (r[0] !== "ok") return { status: "lost" };
    return { status: "ok", expiresAt: num(r[1]), ttlMs: num(r[2]), fence: num(r[3]) };
  }

  async idempotencyComplete(
    ref: LockRef,
    input: { token: string; responseJson: string; requestId: string },
  ): Promise<IdempotencyCompleteResult> {
    const k = idempotencyKeys(ref);
    const r = await this.run("idempotency_complete", [k.record, k.request(input.requestId)], [
      input.token,
      input.responseJson,
      REQUEST_MEMORY_MS,
    ]);
    if (r[0] !== "ok") return { status: "lost" };
    return { status: "ok", completedAt: num(r[1]), fence: num(r[2]) };
  }

  async idempotencyFail(ref: LockRef, input: { token: string; requestId: string }): Promise<IdempotencyFailResult> {
    const k = idempotencyKeys(ref);
    const r = await this.run("idempotency_fail", [k.record, k.request(input.requestId)], [input.token, REQUEST_MEMORY_MS]);
    if (r[0] !== "ok") return { status: "lost" };
    return { status: "ok", fence: num(r[1]) };
  }

  async idempotencyInspect(ref: LockRef): Promise<IdempotencyState> {
    const r = await this.run("idempotency_inspect", [idempotencyKeys(ref).record], []);
    if (r[0] === "completed") {
      return { state: "completed", fence: num(r[1]), completedAt: num(r[2]), response: storedResponse(r[3]) };
    }
    if (r[0] === "started") return { state: "started", fence: num(r[1]), expiresAt: num(r[2]) };
    return { state: "absent" };
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

/**
 * A stored response comes back as "json:<JSON text>": the prefix keeps a
 * client with automatic deserialization from parsing (and so changing) it.
 */
function storedResponse(v: string | number | null): unknown {
  const text = String(v);
  if (!text.startsWith("json:")) throw new Error("expected a stored response from the store");
  return JSON.parse(text.slice("json:".length));
}
