import { DEFAULT_STORE_TIMEOUT_MS, withDeadline } from "../../deadline";
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

  idempotencyBegin(ref: LockRef, input: IdempotencyBeginInput): Promise<IdempotencyBeginResult> {
    return this.call("idempotency_begin", () => this.idempotency(ref).idempotencyBegin(input));
  }

  idempotencyHeartbeat(ref: LockRef, input: { token: string; ttlMs?: number }): Promise<IdempotencyHeartbeatResult> {
    return this.call("idempotency_heartbeat", () => this.idempotency(ref).idempotencyHeartbeat(input));
  }

  idempotencyComplete(
    ref: LockRef,
    input: { token: string; responseJson: string; requestId: string },
  ): Promise<IdempotencyCompleteResult> {
    return this.call("idempotency_complete", () => this.idempotency(ref).idempotencyComplete(input));
  }

  idempotencyFail(ref: LockRef, input: { token: string; requestId: string }): Promise<IdempotencyFailResult> {
    return this.call("idempotency_fail", () => this.idempotency(ref).idempotencyFail(input));
  }

  idempotencyInspect(ref: LockRef): Promise<IdempotencyState> {
    return this.call("idempotency_inspect", () => this.idempotency(ref).idempotencyInspect());
  }

  async ping(): Promise<void> {
    await this.call("ping", () => this.object("health", { ns: "_", name: "_" }).ping());
  }

  private mutex(ref: LockRef) {
    return this.object("mx", ref);
  }

  private idempotency(ref: LockRef) {
    return this.object("id", ref);
  }

  private object(kind: string, ref: LockRef) {
    return this.objects.get(this.objects.idFromName(`${kind}:${ref.ns}:${ref.name}`));
  }

  private call<T>(what: string, call: () => Promise<unknown>): Promise<T> {
    return withDeadline(what, this.timeoutMs, call as () => Promise<T>);
  }
}
