import type { LockRef } from "../../store/types.js";
import { holderKeys } from "../manyHolders/keys.js";

/** A read-write lock's keys (see lua/holders.lua). */
export const rwLockKeys = (ref: LockRef) => holderKeys("rw", ref);
