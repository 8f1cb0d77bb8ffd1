import type { Hono } from "hono";
import type { Env } from "../env.js";
import type { KindName } from "../kinds/registry/ops.js";
import type { LockStore } from "../store/types.js";
import type { ServiceContext } from "../service/ServiceContext.js";
import type { AppEnv } from "./appTypes.js";
import type { Operations } from "./openapi/openapiOps.js";

/** What a force release asks (src/operator/schemas.ts): a label picks holders of a many-holder lock, a fence the mutex's lease. */
export interface ForceReleaseAsk {
  holder?: string;
  fence?: number;
}

/** What a kind brings to the HTTP API: where it is mounted, its routes, and their OpenAPI operations. */
export interface KindApi {
  kind: KindName;
  path: string;
  routes: Hono<AppEnv>;
  operations: Operations;
  /** Offered on a quorum of Redis databases (the others answer 501 there). */
  onQuorum: boolean;
  /** Its GET body (without the name), which a listing's items are too. */
  inspect(ctx: ServiceContext, name: string): Promise<Record<string, unknown>>;
  /** Whether a listing shows it: held, waited on, delayed or stored. */
  listed(state: Record<string, unknown>): boolean;
  /** An operator's force release (the kinds with holders); what it freed. */
  forceRelease?(ctx: ServiceContext, name: string, ask: ForceReleaseAsk): Promise<{ released: number; fence: number; holder: string | null }>;
}

/**
 * What the HTTP app is handed of the kinds (by the Worker's entry point,
 * src/worker.ts, from the registry): each kind's API (mount point, routes,
 * OpenAPI operations, listing and force release) and how the store is chosen.
 * The app names no kind.
 */
export interface HttpKinds {
  apis: KindApi[];
  selectStore(env: Env): LockStore;
  /**
   * The OpenAPI document for a service at `origin`: the Worker's is generated
   * before bundling (tools/gen-openapi.mts, from src/http/openapi/openapi.ts) into
   * the static assets, so the bundle carries neither the document nor the
   * code that derives it from the schemas; `assets` is the ASSETS binding.
   */
  openApiDocument(origin: string, assets: Fetcher | undefined): unknown;
}
