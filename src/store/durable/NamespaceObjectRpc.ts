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
