import type { Hono } from "hono";
import type * as z from "zod/mini";
import type { Env } from "../env.js";
import type { KindName } from "../store/kinds.js";
import type { LockStore } from "../store/types.js";
import type { ServiceKind } from "../service/ServiceKind.js";
import type { TokenOperation } from "../wire/scopedToken.js";
import type { SocketAt } from "../wire/socketProtocol.js";
import type { AppEnv } from "./appTypes.js";
import type { Operations } from "./openapi/openapiOps.js";

/**
 * What a kind brings to the HTTP API (src/kinds/<kind>/index.ts, the `http`
 * of its descriptor), beside what it brings to the service layer: where it is
 * mounted, its routes and their OpenAPI operations, and the words and paths
 * that differ from kind to kind. The app names no kind.
 */
export interface KindApi<K extends KindName = KindName> extends ServiceKind<K> {
  readonly http: {
    /** Its mount point ("/v1/locks"). */
    path: string;
    routes: Hono<AppEnv>;
    operations: Operations;
    /** Offered on a quorum of Redis databases (the others answer 501 there). */
    onQuorum: boolean;
    /** The path parameter naming one ("name"; an idempotency key is a "key"). */
    param: string;
    /** One of them, in the OpenAPI summaries ("a lock"). */
    one: string;
    /** What its listing lists, in the OpenAPI summary ("held or waited-on locks"). */
    listing: string;
    /**
     * Its wait socket routes, after `/{param}/` ("wait"; a read-write lock's "read/wait" and "write/wait"),
     * each with what it tells the lock object of the socket (a read-write lock's mode).
     */
    waitSteps: readonly { step: string; at?: Pick<SocketAt, "mode"> }[];
    /** What a scoped token needs to open its wait socket (a lock's acquires; an idempotency key's only waits). */
    waitNeeds: readonly TokenOperation[];
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

/** Whether a request is a wait or watch socket's handshake (the only requests whose key may come as a subprotocol). */
export function isSocketHandshake(request: Request, apis: readonly KindApi[]): boolean {
  if (request.method !== "GET" || (request.headers.get("upgrade") ?? "").toLowerCase() !== "websocket") return false;
  const pathname = new URL(request.url).pathname;
  const api = apis.find((a) => pathname.startsWith(`${a.http.path}/`));
  if (!api) return false;
  // /<name>/<step>: a lock named "wait" or "watch" is not one.
  const rest = pathname.slice(api.http.path.length + 1);
  const slash = rest.indexOf("/");
  if (slash <= 0) return false;
  const step = rest.slice(slash + 1);
  return step === "watch" || api.http.waitSteps.some((w) => w.step === step);
}
