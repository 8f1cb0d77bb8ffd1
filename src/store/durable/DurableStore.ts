import { DEFAULT_STORE_TIMEOUT_MS, withDeadline } from "../../deadline.js";
import type { KindName, KindOps } from "../kinds.js";
import type { LockObjectRpc } from "./LockObjectRpc.js";
import { lockObjectOf, type LockKindName } from "./lockObjectOf.js";
import type { LockRef } from "../types.js";
import type { NamespaceObjectRpc } from "./NamespaceObjectRpc.js";
import type { OperatorOps } from "../OperatorOps.js";
import type { EveryKindStore } from "../types.js";
import { durableOperator } from "./durableOperator.js";
import { classifyObjectFault } from "./objectFaults.js";

/**
 * The embedded store, as the Worker sees it: each call is an RPC to the
 * lock's own LockObject, which keeps the state in its storage and acts on its
 * waiters and watches in the same step. A Cloudflare-only deployment needs no
 * Upstash account. Every kind's operations are the same one call
 * (LockObject.run), so nothing here is written per operation.
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the kinds' operations are assigned in the constructor; the interface below declares them
export class DurableStore {
  readonly kind = "durable" as const;
  private readonly timeoutMs: number;
  /** Listing and the audit log, where the namespace objects are bound. */
  readonly operator?: OperatorOps;

  constructor(
    private readonly objects: DurableObjectNamespace<LockObjectRpc>,
    options: { timeoutMs?: number; namespaces?: DurableObjectNamespace<NamespaceObjectRpc>; kinds?: readonly KindName[] } = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS;
    if (options.namespaces) this.operator = durableOperator(options.namespaces, this.timeoutMs);
    // Every kind the Worker serves (its list, src/worker/kinds.ts); a test may name only the kinds it uses.
    for (const kind of options.kinds ?? []) Object.assign(this, { [kind]: this.opsOf(kind) });
  }

  async ping(): Promise<void> {
    await this.call<boolean>("health", { ns: "_", name: "_" }, "ping", async (o) => o.ping());
  }

  /** A kind's operations, each one RPC to the lock's object: `store.<kind>.<op>(ref, ...args)`. */
  private opsOf<K extends KindName>(kind: K): KindOps[K] {
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
    return new Proxy({} as KindOps[K], {
      // Only operation names (strings): not `then`, so the object is never taken for a promise.
      get: (_target, op) => (typeof op === "string" && op !== "then" ? call(op) : undefined),
    });
  }

  private async call<T>(kind: LockKindName, ref: LockRef, what: string, fn: (o: DurableObjectStub<LockObjectRpc>) => Promise<T>): Promise<T> {
    const stub = lockObjectOf(this.objects, kind, ref);
    try {
      return await withDeadline(`${kind} ${what}`, this.timeoutMs, () => fn(stub));
    } catch (err) {
      throw classifyObjectFault(`${kind} ${what}`, err);
    }
  }
}

// Every kind's operations, one member per kind, assigned in the constructor.
export interface DurableStore extends EveryKindStore {}
