import type { Redis } from "@upstash/redis";
import { QuorumStoreCore, type QuorumStoreOf, type QuorumStoreOptions } from "../store/quorum/QuorumStore.js";
import { moduleScriptTexts } from "../store/redis/moduleScripts.js";
import { libraryQuorumKinds } from "./kinds.js";

/** The quorum with every kind the library offers on one as a member, typed by its list (`store.mutex`). */
export type QuorumStore = QuorumStoreOf<typeof libraryQuorumKinds>;

/**
 * Redlock: the mutex over N independent Redis databases (N odd, at least 3),
 * for when one Redis is not trusted to stay up (`new QuorumStore(databases)`:
 * the core quorum handed the library's quorum list). Only the mutex; the
 * other kinds are absent, so they throw NotSupportedError (HTTP 501):
 * - semaphore: a holder counted on a majority does not bound the holders. With
 *   3 databases and a limit of 2, three holders can each hold a different
 *   pair of databases, and every database still counts only two.
 * - idempotency keys: they store a result that must never be lost, which a
 *   majority of lock records does not give (that needs replicated writes and
 *   read repair); keep them on one durable store.
 * - read-write lock: a majority would do for it as for the mutex (any writer's
 *   majority shares a database with any reader's), but it is not built yet.
 */
export const QuorumStore = class QuorumStore extends QuorumStoreCore {
  constructor(databases: Redis[], options: QuorumStoreOptions = {}) {
    super(databases, libraryQuorumKinds, { ...options, scriptTexts: moduleScriptTexts });
  }
} as new (
  databases: Redis[],
  options?: QuorumStoreOptions,
) => QuorumStore;
