import type { Env } from "../env.js";
import type { LockStore } from "../store/types.js";
import type { Caller } from "./access/auth.js";
import type { ServiceKind } from "../service/ServiceKind.js";

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
    /** The kinds the app serves (what the store's view of the Worker's writes reads of them: src/store/redis/changeNotes.ts). */
    kinds: readonly ServiceKind[];
  };
}
