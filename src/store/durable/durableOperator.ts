import { DEFAULT_STORE_TIMEOUT_MS, withDeadline } from "../../deadline.js";
import { InvalidInputError } from "../../errors.js";
import { NAME_PATTERN } from "../../limits.js";
import { type NamespaceObjectRpc, namespaceObjectOf } from "./NamespaceObjectRpc.js";
import type { OperatorOps } from "../OperatorOps.js";
import { classifyObjectFault } from "./objectFaults.js";

/**
 * Listing and the audit log on the Durable store: one namespace object per
 * namespace (src/namespaceObject/NamespaceObject.ts) keeps both. A listing
 * page is one call to it for names (then the caller inspects each lock at
 * its own object); the cursor is the last name answered.
 */
export function durableOperator(objects: DurableObjectNamespace<NamespaceObjectRpc>, timeoutMs = DEFAULT_STORE_TIMEOUT_MS): OperatorOps {
  const call = async <T>(ns: string, what: string, fn: (o: DurableObjectStub<NamespaceObjectRpc>) => Promise<T>): Promise<T> => {
    const stub = namespaceObjectOf(objects, ns, "listing");
    try {
      return await withDeadline(`namespace ${what}`, timeoutMs, () => fn(stub));
    } catch (err) {
      throw classifyObjectFault(`namespace ${what}`, err);
    }
  };
  return {
    async names(ns, kind, { prefix, limit, cursor }) {
      let after: string | undefined;
      if (cursor !== undefined) {
        after = cursor.slice(1);
        if (!cursor.startsWith("n") || !NAME_PATTERN.test(after))
          throw new InvalidInputError("invalid_cursor", "cursor is not one this listing answered");
      }
      const names = (await call(ns, "names", async (o) => await o.names(kind, prefix, after, limit))) as string[];
      return { names, cursor: names.length === limit ? `n${names[names.length - 1]}` : null };
    },
    async appendAudit(ns, record) {
      return await call(ns, "audit append", async (o) => await o.appendAudit(record));
    },
    async audit(ns, { limit, cursor }) {
      if (cursor !== undefined && !/^\d{1,15}$/.test(cursor))
        throw new InvalidInputError("invalid_cursor", "cursor is not one this listing answered");
      const entries = await call(ns, "audit list", async (o) => await o.audit(limit, cursor === undefined ? undefined : Number(cursor)));
      return { entries, cursor: entries.length === limit ? entries[entries.length - 1].id : null };
    },
  };
}
