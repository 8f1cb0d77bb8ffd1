import type { LockRef } from "../../store/LockRef";
import { holderKeys } from "../holders/keys";

/** A read-write lock's keys (see holders/holders.lua). */
export const rwlockKeys = (ref: LockRef) => holderKeys("rw", ref);
