import { nameSegment } from "./names.js";
import { KIND_PATHS, type LeaseKind } from "./lease.js";
import type { Transport } from "./transport.js";

export interface ListOptions {
  /** Only names that start with this. */
  prefix?: string;
  /** Names looked at per page, 1 to 100. */
  limit?: number;
  cursor?: string;
}

/** A listing page: each item is the lock's GET body with its name. */
export interface LockPage {
  items: Array<{ name: string } & Record<string, unknown>>;
  cursor: string | null;
}

export interface ForceReleaseOptions {
  /** Why, for the audit log (1-500 characters). */
  reason: string;
  /** A mutex: only the lease of this fence (the one you saw). */
  fence?: number;
  /** A read-write lock or semaphore: only the holders with this label (else all). */
  holder?: string;
}

export interface ForceReleaseResult {
  name: string;
  released: number;
  fence: number;
  holder: string | null;
  auditId: string;
}

export interface AuditEntry {
  id: string;
  at: number;
  keyName: string;
  kind: LeaseKind;
  name: string;
  holder: string | null;
  fence: number | null;
  released: number;
  reason: string;
}

/**
 * What operators do (docs/API.md "Operators"): list a namespace's locks,
 * force-release one (admin keys; others get ForbiddenError), read the audit
 * log. `client.operator` of a HoldfastClient.
 */
export class Operator {
  constructor(
    private readonly transport: Transport,
    private readonly timeoutMs: number,
  ) {}

  whoami(): Promise<{ namespace: string; keyName: string; role: "user" | "admin" }> {
    return this.transport.read("/v1/whoami", { deadline: Date.now() + this.timeoutMs });
  }

  /** One page of the kind's held (waited on, stored) locks. A page may be short while cursor is not null. */
  list(kind: LeaseKind, options: ListOptions = {}): Promise<LockPage> {
    return this.transport.read(`${KIND_PATHS[kind]}${query({ ...options })}`, { deadline: Date.now() + this.timeoutMs });
  }

  /** Every item of the listing, page by page, each name once (on Redis a name may come on two pages: SCAN's rule). */
  async *listAll(kind: LeaseKind, options: Omit<ListOptions, "cursor"> = {}): AsyncGenerator<LockPage["items"][number]> {
    const seen = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = await this.list(kind, { ...options, cursor });
      for (const item of page.items) {
        if (seen.has(item.name)) continue;
        seen.add(item.name);
        yield item;
      }
      cursor = page.cursor ?? undefined;
    } while (cursor);
  }

  /** Frees the lock whoever holds it; the audit log records it. NotHeld: ConflictError with code not_held. */
  async forceRelease(kind: Exclude<LeaseKind, "idempotency">, name: string, options: ForceReleaseOptions): Promise<ForceReleaseResult> {
    const path = `${KIND_PATHS[kind]}/${nameSegment(name)}/force-release`;
    return this.transport.write(path, options, { deadline: Date.now() + this.timeoutMs });
  }

  /** A page of the audit log, newest first. */
  audit(options: { limit?: number; cursor?: string } = {}): Promise<{ entries: AuditEntry[]; cursor: string | null }> {
    return this.transport.read(`/v1/audit${query({ ...options })}`, { deadline: Date.now() + this.timeoutMs });
  }
}

function query(options: { [k: string]: string | number | undefined }): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(options)) if (v !== undefined) params.set(k, String(v));
  const q = params.toString();
  return q ? `?${q}` : "";
}
