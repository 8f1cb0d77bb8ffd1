/**
 * Who holds a lock now, as a busy answer tells it: the holder's label (null
 * when it gave none) and when its lease ends (store time). A 409 `locked`
 * carries it, so a caller turned away can say who is in the way.
 */
export interface CurrentHolder {
  holder: string | null;
  expiresAt: number;
}
