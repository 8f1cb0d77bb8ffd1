import * as z from "zod/mini";
import type { Named, Operations } from "./openapiOps.js";
import { READ_ERRORS, WRITE_ERRORS } from "./openapiOps.js";
import { inspectOperation, type KindApi } from "../kindApi.js";
import {
  AUDIT_MAX_LIMIT,
  auditPageResponseOf,
  forceReleaseResponse,
  LIST_DEFAULT_LIMIT,
  LIST_MAX_LIMIT,
  whoamiResponse,
} from "../../operator/schemas.js";

const cursorQuery = { name: "cursor", description: "The cursor the previous page answered (absent for the first page).", schema: { type: "string" } };

/** The operators' operations in the OpenAPI document (docs/API.md "Operators"), by full path. */
export function operatorOperations(apis: readonly KindApi[]): Operations {
  const ops: Operations = {
    "/v1/whoami": {
      get: { operationId: "whoami", summary: "This key's namespace, name and role", ok: [200, "Whoami", whoamiResponse], errors: [401, 403, 429] },
    },
    "/v1/audit": {
      get: {
        operationId: "auditLog",
        summary: "The namespace's force releases, newest first",
        query: [{ name: "limit", description: `Entries per page, 1 to ${AUDIT_MAX_LIMIT} (default 50).`, schema: { type: "integer" } }, cursorQuery],
        ok: [200, "AuditPage", auditPageResponseOf(apis.map((a) => a.name) as [string, ...string[]])],
        errors: READ_ERRORS,
      },
    },
  };
  for (const api of apis) {
    const inspect = inspectOperation(api)?.ok[0];
    if (!inspect) continue;
    const [, stateId, state] = inspect;
    const id = `${stateId.replace(/State$/, "")}Page`;
    const page: Named = [id, z.object({ items: z.array(z.intersection(z.object({ name: z.string() }), state)), cursor: z.nullable(z.string()) })];
    ops[api.http.path] = {
      get: {
        operationId: `${api.name}List`,
        summary: `List the namespace's ${api.http.listedInSummaries} of this kind`,
        query: [
          { name: "prefix", description: "Only names that start with this.", schema: { type: "string" } },
          {
            name: "limit",
            description: `Names looked at per page, 1 to ${LIST_MAX_LIMIT} (default ${LIST_DEFAULT_LIMIT}); a page may hold fewer items.`,
            schema: { type: "integer" },
          },
          cursorQuery,
        ],
        ok: [200, page[0], page[1]],
        errors: READ_ERRORS,
      },
    };
    const forceBody = api.http.forceReleaseBody;
    if (!api.service.forceRelease || !forceBody) continue;
    ops[`${api.http.path}/{name}/force-release`] = {
      post: {
        operationId: `${api.name}ForceRelease`,
        summary: "Free it whoever holds it (admin keys only), audited",
        body: [forceBody[0], forceBody[1]],
        ok: [200, "ForceReleaseResponse", forceReleaseResponse],
        errors: WRITE_ERRORS,
      },
    };
  }
  return ops;
}
