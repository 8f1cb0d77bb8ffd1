import { stateWithLine } from "../../lockObject/ObjectKinds.js";
import { holdersForceBody } from "../../operator/schemas.js";
import { stateWithWaiters } from "../../service/leases.js";
import type { KindKey, KindName } from "../../store/kinds.js";
import type { RedisKind } from "../../store/redis/RedisKinds.js";
import type { LockRef } from "../../store/types.js";
import { defineKind, type Kind } from "../kind.js";
import { nextHoldersDeadline } from "./durableHolders.js";
import { forceReleaseHolders } from "./service.js";
import type { HolderOps, HolderWriteNote } from "./types.js";

/** A many-holder kind's key: the holders' shared operations and an inspect, and the holders' write notes. */
type HolderKey = KindKey<KindName, HolderOps & { inspect(ref: LockRef): Promise<object> }, unknown, HolderWriteNote>;

/** What a many-holder kind says of itself in its descriptor; holdersKind adds what they all have alike. */
export interface HolderKindOwn<K extends KindKey> {
  nameInMessages: string;
  object: Omit<Kind<K>["object"], "watchedState" | "nextDeadline"> & Partial<Pick<Kind<K>["object"], "nextDeadline">>;
  service: Pick<Kind<K>["service"], "listed" | "writeNotes">;
  http: Pick<Kind<K>["http"], "path" | "operations" | "oneInSummaries" | "listedInSummaries">;
}

/**
 * A many-holder kind's descriptor (the read-write lock, the semaphore, the
 * flow limit): its own parts, and those every many-holder kind has alike: its
 * lock object cleans up the holders' leases (unless the kind says more), its
 * state is its store's with its line's count, an operator frees its holders
 * (all, or those with a label), it is named "name" in its paths and offered
 * on a single store only.
 */
export function holdersKind<K extends HolderKey>(key: K, onRedis: RedisKind<K>, own: HolderKindOwn<K>): Kind<K> {
  return defineKind<K>({
    ...onRedis,
    nameInMessages: own.nameInMessages,
    object: { nextDeadline: nextHoldersDeadline, watchedState: stateWithLine(key.name), ...own.object },
    service: {
      inspect: (request, name) => stateWithWaiters(request, key, name),
      forceRelease: (request, name, ask) => forceReleaseHolders(request, key, name, ask.holder),
      ...own.service,
    },
    http: { offeredOnQuorum: false, nameParam: "name", forceReleaseBody: ["HoldersForceReleaseRequest", holdersForceBody], ...own.http },
  });
}
