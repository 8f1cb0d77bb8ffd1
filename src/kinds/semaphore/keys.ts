import type { LockRef } from "../../store/LockRef.js";
import { holderKeys } from "../../holders/keys.js";

/** A semaphore's keys (see lua/holders.lua). */
export const semaphoreKeys = (ref: LockRef) => holderKeys("sem", ref);
