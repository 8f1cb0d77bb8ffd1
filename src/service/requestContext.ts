import { lockObjectClient } from "../lockObject/lockObjectClient.js";
import type { LockStore } from "../store/types.js";
import { noticingChanges, type TellChange } from "../store/redis/changeNotes.js";
import { followUpsWith, type ServiceContext, type ServiceRequest } from "./ServiceContext.js";
import { clientRequestIds, randomRequestIds } from "./requestIds.js";

/** Each request's context, made at its first use: every function of the service layer it reaches shares it. */
const contexts = new WeakMap<ServiceRequest, ServiceContext>();

/**
 * A request's ServiceContext, made by the first function of the service layer
 * the request reaches (the HTTP layer hands over the request as it came, in
 * one call) and shared by the rest: its ids (the client's, or
 * fresh random ones: requestIds.ts), its follow-ups after the answer, and the
 * store as its writes see it, which tells the lock object after the answer of
 * a write its kind notes, or that changed a lock it has watch sockets on
 * (store/redis/changeNotes.ts): made when the request first uses the store.
 */
export function serviceContextOf(request: ServiceRequest): ServiceContext {
  let made = contexts.get(request);
  if (made === undefined) {
    made = contextOf(request);
    contexts.set(request, made);
  }
  return made;
}

function contextOf(request: ServiceRequest): ServiceContext {
  const { env, ns, clientId } = request;
  const ids = clientId === undefined ? randomRequestIds : clientRequestIds(clientId, request.apiKey, ns);
  const afterAnswer = followUpsWith((p) => request.waitUntil(p));
  const tell: TellChange = (kind, ref, note) =>
    note === undefined
      ? afterAnswer("noteChange", () => lockObjectClient(env, kind, ref).noteChange())
      : afterAnswer("noteWrite", () => lockObjectClient(env, kind, ref).noteWrite(note));
  let view: LockStore | undefined;
  return {
    env,
    ns,
    ids,
    afterAnswer,
    storeKind: request.store.kind,
    get store() {
      view ??= noticingChanges(request.store, request.kinds, tell);
      return view;
    },
  };
}
