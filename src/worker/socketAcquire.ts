import type { Kind } from "../kinds/kind.js";
import type { SocketAcquire } from "../lockObject/sockets/socketLine.js";
import { followUpsWith, type ServiceContext } from "../service/ServiceContext.js";
import { randomRequestIds } from "../service/requestIds.js";
import { InternalError } from "../errors.js";

/**
 * A wait socket's acquire, as the lock object runs it (handed in by
 * src/worker.ts): the service's view of the socket's lock, then the kind's
 * acquire, as its HTTP route calls it. No client request id reaches a
 * socket, so its ids are fresh.
 */
export function socketAcquireOf(kinds: readonly Kind[]): SocketAcquire {
  return (call, ask, signal) => {
    const acquire = kinds.find((k) => k.name === call.at.kind)?.service.socketAcquire;
    if (!acquire) throw new InternalError(`the ${call.at.kind} has no wait socket acquire`);
    const ctx: ServiceContext = {
      env: call.env,
      ns: call.at.ref.ns,
      store: call.store,
      ids: randomRequestIds,
      later: followUpsWith(call.waitUntil),
      line: call.line,
    };
    return "message" in ask ? acquire.acquire(ctx, call.at, ask.message, signal) : acquire.resume(ctx, ask.resume as never, signal);
  };
}
