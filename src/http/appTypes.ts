import type { Env } from "../env.js";
import type { LockStore } from "../store/types.js";

/** Hono generics of the app: bindings, and what the auth middleware sets. */
export interface AppEnv {
  Bindings: Env;
  Variables: {
    ns: string;
    store: LockStore;
    /** The Holdfast-Request-Id the client sent, checked. */
    requestId: string | undefined;
    /** The bearer key that authenticated the request (a secret: derives retried acquires' tokens). */
    apiKey: string;
  };
}
