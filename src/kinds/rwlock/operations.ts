import { heartbeatOperation, lockWaitSocket, READ_ERRORS, releaseRequest, WRITE_ERRORS } from "../../http/operations/leaseOperations.js";
import { type Operation, operation, type WaitSocketOperation } from "../../http/operations/operation.js";
import { rwAcquireBody, rwGrant, rwReleaseResponse, rwStateResponse } from "./schemas.js";
import { acquireRw, heartbeatRw, inspectRw, releaseRw } from "./service.js";
import type { RwMode } from "./types.js";

/**
 * /v1/rwlocks/{name}: the read-write lock, one value per operation (docs/API.md
 * "Read-write lock"). `read/...` and `write/...` name the mode; heartbeat and
 * release also work without it (the token says which holder). Each mode is
 * its own literal step, not one `:mode{read|write}` pattern: a pattern beside
 * the literal `/:name/heartbeat` is a route Hono's RegExpRouter refuses, and
 * the app would fall back to its slower TrieRouter (test/http/router.test.ts).
 */
function releaseOperation(step: string, operationId: string, summary: string, mode: RwMode | "any"): Operation {
  return operation({
    method: "post",
    step,
    operationId,
    summary,
    needs: ["release"],
    body: releaseRequest,
    ok: [[200, "RwReleaseResponse", rwReleaseResponse]],
    errors: WRITE_ERRORS,
    onLease: true,
    run: async (ctx, name, body) => ({ body: await releaseRw(ctx, name, body.token, mode) }),
  });
}

function modeOperations(mode: RwMode): (Operation | WaitSocketOperation)[] {
  const Mode = mode === "read" ? "Read" : "Write";
  return [
    operation({
      method: "post",
      step: `${mode}/acquire`,
      operationId: `rwlock${Mode}Acquire`,
      summary: `Acquire or re-enter a ${mode} lock`,
      needs: ["acquire"],
      body: ["RwAcquireRequest", rwAcquireBody],
      ok: [[200, "RwGrant", rwGrant]],
      errors: WRITE_ERRORS,
      run: async (ctx, name, body, signal) => {
        const { grant, delivery } = await acquireRw(ctx, name, mode, body, signal);
        return { body: grant, delivery };
      },
    }),
    lockWaitSocket(`${mode}/wait`, `rwlock${Mode}Wait`, `Wait for a ${mode} lock over a WebSocket`, { mode }),
    // The token says which holder: the mode in the path changes nothing here.
    heartbeatOperation(`${mode}/heartbeat`, `rwlock${Mode}Heartbeat`, "Extend a read-write lock holder's lease", heartbeatRw),
    releaseOperation(`${mode}/release`, `rwlock${Mode}Release`, `Release one ${mode} hold`, mode),
  ];
}

export const rwLockOperations = [
  ...modeOperations("read"),
  ...modeOperations("write"),
  heartbeatOperation("heartbeat", "rwlockHeartbeat", "Extend a read-write lock holder's lease, whatever it holds", heartbeatRw),
  releaseOperation("release", "rwlockRelease", "Release the token's write hold, or else one read hold", "any"),
  operation({
    method: "get",
    step: "",
    operationId: "rwlockInspect",
    summary: "Inspect a read-write lock",
    needs: ["inspect"],
    ok: [[200, "RwState", rwStateResponse]],
    errors: READ_ERRORS,
    run: async (ctx, name) => ({ body: { name, ...(await inspectRw(ctx, name)) } }),
  }),
];
