import type { LockRef } from "../../store/LockRef.js";
import { holderKeys } from "../holders/keys.js";

/** A read-write lock's keys (see holders/holders.lua). */
export const rwlockKeys = (ref: LockRef) => holderKeys("rw", ref);
