import { DEFAULT_STORE_TIMEOUT_MS, withDeadline } from "../../deadline.js";
import type { KindKey, KindName, OpsOf } from "../kinds.js";
import type { LockKindName, LockObjectOf, LockObjectRpc } from "./LockObjectRpc.js";
import type { LockRef } from "../types.js";
import type { NamespaceObjectRpc } from "./NamespaceObjectRpc.js";
import type { OperatorOps } from "../OperatorOps.js";
import { type StoreCore, withKinds } from "../types.js";
import { durableOperator } from "./durableOperator.js";
import { classifyObjectFault } from "./objectFaults.js";

/**
 * The embedded store, as the Worker sees it: each call is an RPC to the
 * lock's own LockObject, which keeps the state in its storage and acts on its
 * waiters and watches in the same step. A Cloudflare-only deployment needs no
 * Upstash account. Every kind's operations are the same one call
 * (LockObject.run), so nothing here is written per operation.
 */
export class DurableStore implements StoreCore {
  readonly kind = "durable" as const;
  private readonly timeoutMs: number;
  /** Listing and the audit log, where the namespace objects are bound. */
  readonly operator?: OperatorOps;

  /** `objectOf` finds a lock's object: its address is the lock object's (src/lockObject/lockObjectOf.ts). */
  constructor(
    private readonly objectOf: LockObjectOf,
    options: { timeoutMs?: number; namespaces?: DurableObjectNamespace<NamespaceObjectRpc>; kinds?: readonly KindName[] } = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS;
    if (options.namespaces) this.operator = durableOperator(options.namespaces, this.timeoutMs);
    // Every kind the Worker serves (its list, src/worker/kinds.ts); a test may name only the kinds it uses.
    withKinds(
      this,
      (options.kinds ?? []).map((name) => ({ name, ops: this.opsOf(name) })),
    );
  }

  async ping(): Promise<void> {
    await this.call<boolean>("health", { ns: "_", name: "_" }, "ping", async (o) => o.ping());
  }

  /** A kind's operations, each one RPC to the lock's object: `store.<kind>.<op>(ref, ...args)`. */
  private opsOf(kind: KindName): object {
    // Each operation's function made once, at its first call, not on every call (the store lives as long as the isolate).
    const made = new Map<string, (ref: LockRef, ...args: unknown[]) => Promise<unknown>>();
    const call = (op: string) => {
      let fn = made.get(op);
      if (!fn) {
        fn = (ref, ...args) => this.call(kind, ref, op, (o) => o.run(kind, op as never, [ref, ...args]) as Promise<unknown>);
        made.set(op, fn);
      }
      return fn;
    };
    return new Proxy(
      {},
      {
        // Only operation names (strings): not `then`, so the object is never taken for a promise.
        get: (_target, op) => (typeof op === "string" && op !== "then" ? call(op) : undefined),
      },
    );
  }

  private async call<T>(kind: LockKindName, ref: LockRef, what: string, fn: (o: DurableObjectStub<LockObjectRpc>) => Promise<T>): Promise<T> {
    const stub = this.objectOf(kind, ref);
    try {
      return await withDeadline(`${kind} ${what}`, this.timeoutMs, () => fn(stub));
    } catch (err) {
      throw classifyObjectFault(`${kind} ${what}`, err);
    }
  }
}

/** The Durable store of these kinds, typed by their keys: one member per kind (`store.idempotency.begin(...)`). */
export function durableStoreWith<const L extends readonly KindKey[]>(
  objectOf: LockObjectOf,
  kinds: L,
  options: { timeoutMs?: number; namespaces?: DurableObjectNamespace<NamespaceObjectRpc> } = {},
) {
  // The constructor adds a member per kind named (withKinds); the type says which.
  return new DurableStore(objectOf, { ...options, kinds: kinds.map((k) => k.name) }) as DurableStore & {
    readonly [K in L[number] as K["name"]]: OpsOf<K>;
  };
}
