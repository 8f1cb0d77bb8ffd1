import * as z from "zod/mini";
import { holderLabel } from "../wire/schemas.js";
import { InvalidInputError } from "../errors.js";
import type { ScopedTokenClaims } from "../wire/scopedToken.js";

/** A listing page: 1 to LIST_MAX_LIMIT items, LIST_DEFAULT_LIMIT by default (each item is an inspect of its lock). */
export const LIST_DEFAULT_LIMIT = 25;
export const LIST_MAX_LIMIT = 100;
export const AUDIT_DEFAULT_LIMIT = 50;
export const AUDIT_MAX_LIMIT = 200;

const reason = z.string().check(z.minLength(1), z.maxLength(500));

/** POST /v1/locks/{name}/force-release: why (for the audit log), and optionally the fence of the lease seen (another is left alone). */
export const mutexForceBody = z.strictObject({ reason, fence: z.optional(z.int().check(z.gte(1))) });

/** POST /v1/{rwlocks|semaphores}/{name}/force-release: why, and optionally the label of the holders to free (else all). */
export const holdersForceBody = z.strictObject({ reason, holder: z.optional(holderLabel) });

export const forceReleaseResponse = z.object({
  name: z.string(),
  /** How many holders were freed (1 for a mutex). */
  released: z.int(),
  /** The freed lease's fence (the highest, for several). */
  fence: z.int(),
  /** The freed holder's label (the first to end, for several); null when none had one. */
  holder: z.nullable(z.string()),
  /** The audit entry written for it. */
  auditId: z.string(),
});

/** An audit entry; `kind` is one of the service's kinds (its names: the OpenAPI document's enum). */
const auditEntrySchemaOf = (kindNames: readonly [string, ...string[]]) =>
  z.object({
    id: z.string(),
    at: z.int(),
    keyName: z.string(),
    kind: z.enum(kindNames),
    name: z.string(),
    holder: z.nullable(z.string()),
    fence: z.nullable(z.int()),
    released: z.int(),
    reason: z.string(),
  });

export const auditPageResponseOf = (kindNames: readonly [string, ...string[]]) =>
  z.object({ entries: z.array(auditEntrySchemaOf(kindNames)), cursor: z.nullable(z.string()) });

export const whoamiResponse = z.object({ namespace: z.string(), keyName: z.string(), role: z.enum(["user", "admin"]) });

/** ?limit= of a listing or the audit log: a whole number in range, or the default. */
export function limitParam(raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d{1,4}$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
    throw new InvalidInputError("invalid_limit", `limit must be a whole number from 1 to ${max}`);
  }
  return Number(raw);
}

/** A name's start: the characters of names (a prefix may be "." though a name may not). */
const PREFIX_PATTERN = /^[A-Za-z0-9._:@+=-]{1,200}$/;

/** ?prefix= of a listing: the start of a name ("" for every name). */
export function prefixParam(raw: string | undefined): string {
  if (raw === undefined || raw === "") return "";
  if (!PREFIX_PATTERN.test(raw))
    throw new InvalidInputError("invalid_prefix", "prefix must be the start of a name: 1-200 of A-Z a-z 0-9 . _ : @ + = -");
  return raw;
}

/** ?cursor=: as the last page answered it (each store checks its own form). */
export function cursorParam(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (raw.length < 1 || raw.length > 300) throw new InvalidInputError("invalid_cursor", "cursor is not one this listing answered");
  return raw;
}

/** What a key may do: "user" locks and reads; "admin" also force-releases (docs/API.md "Keys and roles"). */
type KeyRole = "user" | "admin";

/** Who called: the key's namespace, role and name (never the key itself: audit entries and the console show the name). */
export interface Caller {
  namespace: string;
  role: KeyRole;
  /** The name API_KEYS gives the key, else `key-<its entry's position in API_KEYS>`. */
  keyName: string;
  /** A scoped token's caller: what the token allows (src/http/access/scopedTokens.ts checks each request against it). */
  scope?: ScopedTokenClaims;
}
