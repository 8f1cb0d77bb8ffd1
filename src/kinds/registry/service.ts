import { mutexSocketAcquire } from "../mutex/service.js";
import { rwLockSocketAcquire } from "../rwlock/service.js";
import { semaphoreSocketAcquire } from "../semaphore/service.js";
import { followUpsWith, type ServiceContext } from "../../service/ServiceContext.js";
import { randomRequestIds } from "../../service/requestIds.js";
import type { KindSocketAcquire } from "../../service/socketAcquire.js";
import type { SocketAcquire } from "../../lockObject/sockets/socketLine.js";
import type { WaitingKindName } from "./ops.js";

/** The kind registry: each waiting kind's acquire on a wait socket (src/kinds/<kind>/service.ts). */
export const socketAcquires: { [K in WaitingKindName]: KindSocketAcquire<K> } = {
  mutex: mutexSocketAcquire,
  rwlock: rwLockSocketAcquire,
  semaphore: semaphoreSocketAcquire,
};

/**
 * A wait socket's acquire, as the lock object runs it (handed in by src/worker.ts):
 * the service's view of the socket's lock, then the kind's acquire, as the HTTP
 * route calls it. No client request id reaches a socket, so its ids are fresh.
 */
export const socketAcquire: SocketAcquire = (call, ask, signal) => {
  const ctx: ServiceContext = {
    env: call.env,
    ns: call.at.ref.ns,
    store: call.store,
    ids: randomRequestIds,
    later: followUpsWith(call.waitUntil),
    line: call.line,
  };
  const kind = socketAcquires[call.at.kind as WaitingKindName] as KindSocketAcquire<WaitingKindName>;
  return "message" in ask ? kind.acquire(ctx, call.at, ask.message, signal) : kind.resume(ctx, ask.resume as never, signal);
};
