/**
 * The command line's own exit statuses (from sysexits.h where one fits).
 * When CMD ran, holdfast exits with CMD's status instead (128 + the signal
 * number when a signal ended it), unless the lease was lost under it.
 */
export const EXIT = {
  /** release: the token does not hold the lock; force-release: it is not held. Nothing changed. */
  notHeld: 1,
  /** Bad usage: an unknown flag, a bad duration, a missing CMD, an option this Node cannot do. */
  usage: 64,
  /** The service could not be reached, or its store did not answer. */
  unavailable: 69,
  /** The lock was not acquired within --wait (or the --once key is being run elsewhere). */
  notAcquired: 75,
  /** The API key was refused. */
  noPermission: 77,
  /** No service URL or API key configured. */
  config: 78,
  /** The lease was lost while CMD ran: CMD was stopped (SIGTERM, then SIGKILL). */
  leaseLost: 79,
  /** Something holdfast did not expect (a bug, or a service answer it does not know): the message says what. */
  software: 70,
  /** CMD was found but could not be run (not executable). */
  cannotExecute: 126,
  /** CMD was not found. */
  notFound: 127,
} as const;
