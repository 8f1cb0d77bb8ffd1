/**
 * A write whose answer the store keeps under its request id (2 minutes), so
 * that a retry of it (the same id) gets the first answer instead of applying
 * twice.
 */
export interface AnsweredWrite {
  requestId: string;
  /**
   * The request id was made for this one call (the client sent no id of its own, or the lock object made
   * it), so no retry can carry it again: the Durable store keeps no answer under it (one storage write less,
   * and no row for the alarm to scan). The Redis scripts keep theirs.
   */
  idUnrepeated?: boolean;
}
