import type { Env } from "../env";
import type { LockStore } from "../store/types";

/** Hono generics of the app: bindings, and what the auth middleware sets. */
export interface AppEnv {
  Bindings: Env;
  Variables: { ns: string; store: LockStore };
}
