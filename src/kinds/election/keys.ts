import type { LockRef } from "../../store/types.js";
import type { MutexKeys } from "../mutex/keys.js";

/**
 * An election's Redis keys (lua/FIELDS.md): the mutex's, under the tag `el`
 * (`hf:{el:<ns>:<name>}` and its neighbours), so an election and a mutex of
 * one name are two locks.
 */
export const electionKeys: MutexKeys = {
  lock: (ref: LockRef) => `hf:{el:${ref.ns}:${ref.name}}`,
  legacyFence: (lock: string) => `${lock}:fence`,
  ended: (lock: string) => `${lock}:ended`,
  request: (lock: string, requestId: string) => `${lock}:rq:${requestId}`,
  watchers: (lock: string) => `${lock}:watchers`,
};
