import { idempotency } from "../kinds/idempotency/index.js";
import type { Kind } from "../kinds/kind.js";
import { mutex } from "../kinds/mutex/index.js";
import { rwLock } from "../kinds/rwlock/index.js";
import { semaphore } from "../kinds/semaphore/index.js";

/**
 * The kinds the Worker serves, in the order the OpenAPI document lists them.
 * Adding a kind: its folder (src/kinds/<kind>/), its Lua (lua/<kind>/), and
 * one line here (and one in src/library/kinds.ts for the library).
 */
export const kinds: readonly Kind[] = [mutex, idempotency, rwLock, semaphore] as readonly Kind[];
