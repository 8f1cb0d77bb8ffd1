import type { KindApi } from "../http/kindApi.js";
import type { ObjectKind } from "../lockObject/ObjectKinds.js";
import type { KindKey } from "../store/kinds.js";
import type { RedisKind } from "../store/redis/RedisKinds.js";

/**
 * A lock kind, as the Worker serves it: one value (src/kinds/<kind>/index.ts),
 * each part of it the shape one layer of the core defines and reads:
 *
 *   name, redis        the Redis store's (RedisKind, src/store/redis/RedisKinds.ts); the library's list holds only these
 *   object             the lock object's (ObjectKind, src/lockObject/ObjectKinds.ts)
 *   nameInMessages, service  the service layer's (ServiceKind, src/service/ServiceKind.ts)
 *   http               the HTTP app's (KindApi, src/http/kindApi.ts)
 *
 * The Worker's list of them is src/worker/kinds.ts.
 */
export type Kind<K extends KindKey = KindKey> = RedisKind<K> & ObjectKind<K> & KindApi<K>;

/** A kind's descriptor, checked against every layer's shape (so a missing part fails to compile in the kind's own file). */
export const defineKind = <K extends KindKey>(kind: Kind<K>): Kind<K> => kind;

/** A lock someone waits for is listed even when free (its line's count, from the lock object, is in its state). */
export const waitedOn = (state: Record<string, unknown>) => Number(state.waiters) > 0;
