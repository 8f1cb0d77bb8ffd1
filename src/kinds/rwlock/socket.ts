import { validated } from "../../wire/parse.js";
import type { SocketAt } from "../../wire/socketProtocol.js";
import { rwAcquireBody } from "./schemas.js";
import type { RwLockWait } from "./wait.js";

/** The read-write lock's wait socket: the mode comes from the path, the rest is the HTTP acquire body. */
export function rwLockSocketWait(at: SocketAt, message: unknown): RwLockWait {
  const body = validated(message, rwAcquireBody, "acquire message");
  return {
    kind: "rwlock",
    store: at.store,
    ref: at.ref,
    mode: at.mode ?? "read",
    ttlMs: body.ttlMs,
    waitMs: body.waitMs,
    token: body.token,
    onExpire: body.onExpire,
    holder: body.holder,
  };
}
