import { mutexSocketWait } from "../mutex/socket.js";
import { rwLockSocketWait } from "../rwlock/socket.js";
import { semaphoreSocketWait } from "../semaphore/socket.js";
import type { SocketAt } from "../../wire/socketProtocol.js";
import type { KindWait, WaitingKindName } from "./ops.js";

/**
 * The kind registry: each waiting kind's wait socket (src/kinds/<kind>/socket.ts):
 * its acquire message checked, as the wait it asks of the lock object. It
 * throws InvalidInputError for a bad message.
 */
export const socketWaits: { [K in WaitingKindName]: (at: SocketAt, message: unknown) => KindWait[K] } = {
  mutex: mutexSocketWait,
  rwlock: rwLockSocketWait,
  semaphore: semaphoreSocketWait,
};
