import type { LockRef } from "../../store/types.js";
import { holderKeys } from "../manyHolders/keys.js";

/** A semaphore's keys (see lua/holders.lua). */
export const semaphoreKeys = (ref: LockRef) => holderKeys("sem", ref);
