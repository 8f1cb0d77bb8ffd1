import type { KindName } from "./kinds.js";

/** One page of a namespace's lock names of one kind: candidates a listing looks at (src/operator/listing.ts). */
export interface NamePage {
  names: string[];
  /** Where the next page starts; null when this was the last. Opaque to callers. */
  cursor: string | null;
}

export interface NamePageRequest {
  prefix: string;
  limit: number;
  cursor: string | undefined;
}

/** A force release as the audit log keeps it (docs/API.md "Audit log"). Never the key itself: its name. */
export interface AuditRecord {
  keyName: string;
  kind: KindName;
  name: string;
  /** The freed holder's label (the first, when several were freed); null when it had none. */
  holder: string | null;
  /** The freed lease's fence (the highest, when several were freed). */
  fence: number | null;
  /** How many holders were freed. */
  released: number;
  reason: string;
}

export interface AuditEntry extends AuditRecord {
  id: string;
  /** When it was written, ms since the epoch, by the store's clock. */
  at: number;
}

interface AuditPage {
  entries: AuditEntry[];
  cursor: string | null;
}

/** Audit entries are kept this long on both stores, then dropped. */
export const AUDIT_KEEP_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * What a store brings for operators: the names of a namespace's locks of a
 * kind, and the audit log of force releases. Never on a lock's hot path: the
 * lock scripts name no key of these (key locking, docs/DESIGN.md).
 */
export interface OperatorOps {
  names(ns: string, kind: KindName, page: NamePageRequest): Promise<NamePage>;
  appendAudit(ns: string, record: AuditRecord): Promise<AuditEntry>;
  audit(ns: string, page: { limit: number; cursor: string | undefined }): Promise<AuditPage>;
}
