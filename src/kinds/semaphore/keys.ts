import type { LockRef } from "../../store/LockRef";
import { holderKeys } from "../holders/keys";

/** A semaphore's keys (see holders/holders.lua). */
export const semaphoreKeys = (ref: LockRef) => holderKeys("sem", ref);
