import { validated } from "../../wire/parse.js";
import type { SocketAt } from "../../wire/socketProtocol.js";
import { mutexAcquireBody } from "./schemas.js";
import type { MutexWait } from "./wait.js";

/** The mutex's wait socket: its acquire message is the HTTP acquire body, and asks the lock object for this wait. */
export function mutexSocketWait(at: SocketAt, message: unknown): MutexWait {
  const body = validated(message, mutexAcquireBody, "acquire message");
  return {
    kind: "mutex",
    store: at.store,
    ref: at.ref,
    ttlMs: body.ttlMs,
    waitMs: body.waitMs,
    token: body.token,
    onExpire: body.onExpire,
    holder: body.holder,
    lockDelayMs: body.lockDelayMs,
  };
}
