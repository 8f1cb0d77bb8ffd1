import type { ServiceKind } from "../service/ServiceKind.js";
import type { ServiceRequest } from "../service/ServiceContext.js";
import type { NamePageRequest } from "../store/OperatorOps.js";
import { operatorOps } from "../store/types.js";
import { serviceContextOf } from "../service/requestContext.js";

/**
 * A page of the namespace's locks of one kind: the store names candidates
 * (Redis: SCAN over the kind's keys; Durable: the namespace object's names),
 * each is inspected as its GET would be, and those neither held, waited on,
 * delayed nor stored are left out. So a page may hold fewer items than
 * `limit` (even none) while `cursor` says there is more: follow it to the end.
 */
export async function listLocks(request: ServiceRequest, kind: ServiceKind, page: NamePageRequest) {
  const ctx = serviceContextOf(request);
  const { names, cursor } = await operatorOps(ctx.store).names(ctx.ns, kind.name, page);
  const states = await Promise.all(names.map((name) => kind.service.inspect(request, name)));
  const items = names.map((name, i) => ({ name, ...states[i] })).filter((_, i) => kind.service.listed(states[i]));
  return { items, cursor };
}
