/**
 * Why a waiter's token is withdrawn, which says what the store may take back:
 * - "left": it left the line (its wait ran out, its client went away) before
 *   any grant reached it. Nobody else knows its token, so whatever the store
 *   holds for it is taken back, picked-up mark or not (a waiter granted on
 *   arrival has no mark).
 * - "unclaimed": its grant was answered but not picked up in time. Its client
 *   may yet show a sign of life, so the grant is taken back only while the
 *   store still marks it not picked up.
 */
export type WithdrawReason = "left" | "unclaimed";
