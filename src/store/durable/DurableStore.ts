import { DEFAULT_STORE_TIMEOUT_MS, withDeadline } from "../../deadline";
import type {
  LockRef,
  LockStore,
  MutexAcquireInput,
  MutexAcquireResult,
  MutexHeartbeatResult,
  MutexReleaseResult,
  MutexState,
} from "../types";
import type { LockStateObject } from "./LockStateObject";

/**
 * The embedded store: lock state in a Durable Object per (kind, namespace,
 * name), so a Cloudflare-only deployment needs no Upstash account.
 */
export class DurableStore implements LockStore {
  readonly kind = "durable" as const;
  private readonly timeoutMs: number;

  constructor(
    private readonly objects: DurableObjectNamespace<LockStateObject>,
    options: { timeoutMs?: number } = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS;
  }

  mutexAcquire(ref: LockRef, input: MutexAcquireInput): Promise<MutexAcquireResult> {
    return this.call("mutex_acquire", () => this.mutex(ref).mutexAcquire(ref.name, input));
  }

  mutexHeartbeat(ref: LockRef, input: { token: string; ttlMs?: number }): Promise<MutexHeartbeatResult> {
    return this.call("mutex_heartbeat", () => this.mutex(ref).mutexHeartbeat(input));
  }

  mutexRelease(ref: LockRef, input: { token: string; requestId: string }): Promise<MutexReleaseResult> {
    return this.call("mutex_release", () => this.mutex(ref).mutexRelease(input));
  }

  mutexInspect(ref: LockRef): Promise<MutexState> {
    return this.call("mutex_inspect", () => this.mutex(ref).mutexInspect());
  }

  async ping(): Promise<void> {
    await this.call("ping", () => this.object("health", { ns: "_", name: "_" }).ping());
  }

  private mutex(ref: LockRef) {
    return this.object("mx", ref);
  }

  private object(kind: string, ref: LockRef) {
    return this.objects.get(this.objects.idFromName(`${kind}:${ref.ns}:${ref.name}`));
  }

  private call<T>(what: string, call: () => Promise<unknown>): Promise<T> {
    return withDeadline(what, this.timeoutMs, call as () => Promise<T>);
  }
}
