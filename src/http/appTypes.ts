import type { Env } from "../env.js";
import type { LockStore } from "../store/types.js";

/** Hono generics of the app: bindings, and what the auth middleware sets. */
export interface AppEnv {
  Bindings: Env;
  Variables: { ns: string; store: LockStore };
}
