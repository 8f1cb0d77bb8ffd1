import type { Env } from "../env.js";
import type { KindApi } from "../kinds/registry/routes.js";
import type { LockStore } from "../store/types.js";
import type { Caller } from "./auth.js";

/** Hono generics of the app: bindings, and what the auth middleware sets. */
export interface AppEnv {
  Bindings: Env;
  Variables: {
    ns: string;
    /** Who called: namespace, role and key name (auth.ts). */
    caller: Caller;
    store: LockStore;
    /** The Holdfast-Request-Id the client sent, checked. */
    requestId: string | undefined;
    /** The bearer key that authenticated the request (a secret: derives retried acquires' tokens). */
    apiKey: string;
  };
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
}
