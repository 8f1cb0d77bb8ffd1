import type { Env } from "../env.js";
import { lockObjectClient } from "../lockObject/lockObjectClient.js";
import type { LockStore } from "../store/types.js";
import { noticingChanges, type TellChange } from "../store/redis/changeNotes.js";
import { followUpsWith, type ServiceContext } from "./ServiceContext.js";
import { clientRequestIds, randomRequestIds } from "./requestIds.js";
import type { ServiceKind } from "./ServiceKind.js";

/** What one request brings to the service layer (http/serviceContextOf.ts reads it off the Hono context). */
export interface ServiceRequest {
  env: Env;
  ns: string;
  /** The store the Worker selected. */
  store: LockStore;
  kinds: readonly ServiceKind[];
  /** The client's request id, when it sent one (its ids are derived from it), and the key it came with. */
  clientId: string | undefined;
  apiKey: string;
  /** The platform's waitUntil: the follow-ups after the answer run on it. */
  waitUntil(p: Promise<unknown>): void;
}

/**
 * A request's ServiceContext, made in one call: its ids (the client's, or
 * fresh random ones: requestIds.ts), its follow-ups after the answer, and the
 * store as its writes see it, which tells the lock object after the answer of
 * a write its kind notes, or that changed a lock it has watch sockets on
 * (store/redis/changeNotes.ts): made when the request first uses the store.
 */
export function serviceContextOf(request: ServiceRequest): ServiceContext {
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
