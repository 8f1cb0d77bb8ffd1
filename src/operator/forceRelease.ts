import { ForbiddenError, NotSupportedError } from "../errors.js";
import type { Caller } from "./schemas.js";
import type { ForceReleaseAsk, ServiceKind } from "../service/ServiceKind.js";
import type { ServiceRequest } from "../service/ServiceContext.js";
import { operatorOps } from "../store/types.js";
import { serviceContextOf } from "../service/requestContext.js";

/**
 * An operator frees a lock whose holder is known to be gone: admin keys only
 * (403 forbidden otherwise, nothing changed). The kind frees it as a release
 * would (the next waiter gets it, the old holder's next heartbeat or release
 * is lease_lost, the next fence is higher), then the audit log gets an entry
 * naming the key by its name. The entry is written after the release: a
 * failure there is a 503 and the client's retry (same Holdfast-Request-Id)
 * replays the release and writes the entry, so every force release is
 * audited at least once.
 */
export async function forceRelease(
  request: ServiceRequest,
  caller: Caller,
  kind: ServiceKind,
  name: string,
  ask: ForceReleaseAsk & { reason: string },
) {
  const ctx = serviceContextOf(request);
  if (caller.role !== "admin") {
    throw new ForbiddenError("a force release needs an admin key (an API_KEYS entry namespace:admin[:name]=key; see docs/API.md, Keys and roles)");
  }
  if (!kind.service.forceRelease) throw new NotSupportedError(`${kind.nameInMessages} have no force release`);
  const audit = operatorOps(ctx.store); // a store without an audit log frees nothing
  const freed = await kind.service.forceRelease(request, name, ask);
  const entry = await audit.appendAudit(ctx.ns, { keyName: caller.keyName, kind: kind.name, name, reason: ask.reason, ...freed });
  return { name, ...freed, auditId: entry.id };
}
