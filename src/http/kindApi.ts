import type * as z from "zod/mini";
import type { Env } from "../env.js";
import type { KindKey } from "../store/kinds.js";
import type { LockStore } from "../store/types.js";
import type { ServiceKind } from "../service/ServiceKind.js";
import { isWaitSocket, type KindOperations, type Operation, type WaitSocketOperation } from "./operations/operation.js";

/**
 * What a kind brings to the HTTP API (src/kinds/<kind>/index.ts, the `http`
 * of its descriptor), beside what it brings to the service layer: where it is
 * mounted, its operations (each one value: its route, validation, OpenAPI
 * operation, scoped-token needs and metric), and the words that differ from
 * kind to kind. The app names no kind and no operation.
 */
export interface KindApi<K extends KindKey = KindKey> extends ServiceKind<K> {
  readonly http: {
    /** Its mount point ("/v1/locks"). */
    path: string;
    operations: KindOperations;
    /** Offered on a quorum of Redis databases (the others answer 501 there). */
    offeredOnQuorum: boolean;
    /** The path parameter naming one ("name"; an idempotency key is a "key"). */
    nameParam: string;
    /** One of them, in the OpenAPI summaries ("a lock"). */
    oneInSummaries: string;
    /** What its listing lists, in the OpenAPI summary ("held or waited-on locks"). */
    listedInSummaries: string;
    /**
     * Set for a kind whose watch takes a position (its lock object part's `watchedHistory`: an election's
     * history): `?since=N` on its watch socket, described so in the OpenAPI document.
     */
    watchPosition?: string;
    /** Its force release's body and the body's name in the OpenAPI document (with service.forceRelease). */
    forceReleaseBody?: readonly [string, z.ZodMiniType<{ reason: string; fence?: number; holder?: string }>];
  };
}

/**
 * What the HTTP app is handed (by the Worker's entry point, src/worker.ts):
 * the kinds, and how the store is chosen.
 */
export interface HttpKinds {
  apis: readonly KindApi[];
  selectStore(env: Env): LockStore;
  /**
   * The OpenAPI document for a service at `origin`: the Worker's is generated
   * before bundling (tools/gen-openapi.mts, from src/http/openapi/openapi.ts) into
   * the static assets, so the bundle carries neither the document nor the
   * code that derives it from the schemas; `assets` is the ASSETS binding.
   */
  openApiDocument(origin: string, assets: Fetcher | undefined): unknown;
}

/** Where a request lands: its kind, the name it names and the operation at its step, if any. */
export interface OperationAt {
  api: KindApi;
  name: string;
  /** Its path after the name ("acquire", "read/wait", "" for the name itself, "watch"). */
  step: string;
  /** The kind's operation at that step and method (undefined for the core's own, watch, and for no route). */
  op?: Operation | WaitSocketOperation;
}

/** The kind, name and operation a request's path and method address; undefined outside every kind's mount point. */
export function operationAt(method: string, pathname: string, apis: readonly KindApi[]): OperationAt | undefined {
  const api = apis.find((a) => pathname.startsWith(`${a.http.path}/`));
  if (!api) return undefined;
  const rest = pathname.slice(api.http.path.length + 1);
  const slash = rest.indexOf("/");
  const name = slash < 0 ? rest : rest.slice(0, slash);
  const step = slash < 0 ? "" : rest.slice(slash + 1);
  const verb = method.toLowerCase();
  const op = api.http.operations.find((o) => o.step === step && (o.method ?? "get") === verb);
  return { api, name, step, op };
}

/** The kind's GET of one (its state): the watch socket pushes it, the listing lists it. */
export function inspectOperation(api: KindApi): Operation | undefined {
  const op = api.http.operations.find((o) => o.method === "get" && o.step === "");
  return op && !isWaitSocket(op) ? op : undefined;
}

/** Whether a request is a wait or watch socket's handshake (the only requests whose key may come as a subprotocol). */
export function isSocketHandshake(request: Request, apis: readonly KindApi[]): boolean {
  if (request.method !== "GET" || (request.headers.get("upgrade") ?? "").toLowerCase() !== "websocket") return false;
  const at = operationAt("GET", new URL(request.url).pathname, apis);
  // /<name>/<step>: a lock named "wait" or "watch" is not one.
  if (!at?.name || !at.step) return false;
  return at.step === "watch" || (at.op !== undefined && isWaitSocket(at.op));
}
