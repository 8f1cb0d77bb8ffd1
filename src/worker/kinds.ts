import type { StoreCore } from "../store/types.js";
import { flow } from "../kinds/flow/index.js";
import { election } from "../kinds/election/index.js";
import { idempotency } from "../kinds/idempotency/index.js";
import { mutex } from "../kinds/mutex/index.js";
import { rwLock } from "../kinds/rwlock/index.js";
import { semaphore } from "../kinds/semaphore/index.js";

/**
 * The kinds the Worker serves, in the order the OpenAPI document lists them.
 * Adding a kind: its folder (src/kinds/<kind>/), its Lua (lua/<kind>/), and
 * one line here (and one in src/library/kinds.ts for the library).
 */
export const kinds = [mutex, idempotency, rwLock, semaphore, flow, election] as const;

/** A store with every kind the Worker serves as a member, typed by the list above (the Durable store's rules). */
export type WorkerStore = StoreCore & {
  readonly [K in (typeof kinds)[number] as K["name"]]: ReturnType<K["object"]["durable"]>;
};
