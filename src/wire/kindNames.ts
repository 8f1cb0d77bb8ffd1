/**
 * The kinds as the API names them (the `kind` of a notification, a listing,
 * an audit entry, a wait socket): words of the wire, so the core may say
 * them without knowing any kind's code. The registry (src/kinds/registry/)
 * is where each kind brings what it does.
 */
export const KIND_NAMES = ["mutex", "rwlock", "semaphore", "idempotency"] as const;

/** A kind as the wire names it. */
export type KindWireName = (typeof KIND_NAMES)[number];

/** How messages name each kind. */
export const KIND_NOUNS: Record<(typeof KIND_NAMES)[number], string> = {
  mutex: "the mutex",
  rwlock: "the read-write lock",
  semaphore: "the semaphore",
  idempotency: "idempotency keys",
};
