import { validated } from "../../wire/parse.js";
import type { SocketAt } from "../../wire/socketProtocol.js";
import { semaphoreAcquireBody } from "./schemas.js";
import type { SemaphoreWait } from "./wait.js";

/** The semaphore's wait socket: its acquire message is the HTTP acquire body. */
export function semaphoreSocketWait(at: SocketAt, message: unknown): SemaphoreWait {
  const body = validated(message, semaphoreAcquireBody, "acquire message");
  return {
    kind: "semaphore",
    store: at.store,
    ref: at.ref,
    limit: body.limit,
    permits: body.permits,
    ttlMs: body.ttlMs,
    waitMs: body.waitMs,
    onExpire: body.onExpire,
    holder: body.holder,
  };
}
