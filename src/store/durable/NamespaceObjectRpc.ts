import type { KindName } from "../kinds.js";
import type { AuditEntry, AuditRecord } from "../OperatorOps.js";

/** The namespace object's methods as the Worker and the lock objects call them (its binding's type). */
export interface NamespaceObjectRpc extends Rpc.DurableObjectBranded {
  note(kind: KindName, name: string, until: number): void;
  names(kind: KindName, prefix: string, after: string | undefined, limit: number): string[];
  appendAudit(record: AuditRecord): AuditEntry;
  audit(limit: number, before: number | undefined): AuditEntry[];
  reserveSocket(
    object: string,
    count: number,
    cap: number,
    clientIds: string[],
    openIds?: string[],
  ): { ok: boolean; total: number; floodUntil?: number; openRetryMs?: number };
  penalize(clientIds: string[], until: number): void;
  tellSockets(object: string, count: number): void;
}

/** A namespace object's job: the namespace's listing and audit log, or its count of wait sockets. */
export type NamespaceObjectJob = "listing" | "sockets";

/**
 * The namespace object of `ns` that does `job`: two objects of the one class
 * per namespace. The one named by the namespace keeps its listing and audit
 * log, and every lock object of the namespace tells it about itself
 * (src/lockObject/listingUpdates.ts): a namespace that uses a thousand locks
 * at once sends it a thousand notes. The one named `sockets:<ns>` (":" is in
 * no namespace) counts the namespace's wait sockets, floods and new sockets
 * (src/lockObject/sockets/socketCaps.ts), which a socket's handshake asks
 * for: so a waiter never gets in line behind the listing's notes, however
 * many locks its namespace used (issue 54).
 */
export function namespaceObjectOf(
  namespaces: DurableObjectNamespace<NamespaceObjectRpc>,
  ns: string,
  job: NamespaceObjectJob,
): DurableObjectStub<NamespaceObjectRpc> {
  return namespaces.get(namespaces.idFromName(job === "listing" ? ns : `sockets:${ns}`));
}
