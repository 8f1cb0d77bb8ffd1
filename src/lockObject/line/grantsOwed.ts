import { PICKUP_MS } from "../../limits.js";
import type { WithdrawReason } from "../../store/types.js";
import { RecentTokens } from "../RecentTokens.js";

/** How long a departed waiter's token is remembered: past any retried release that could still hand it the lock. */
const LEFT_REMEMBERED_MS = 60_000;

/**
 * What a line (LineOrder.ts) still owes the store about its grants: the
 * pickups it waits for, and the take-backs it has to send, with the tokens
 * that say which late news of a grant is taken back again.
 */
export class GrantsOwed {
  /** Grants handed out and not yet picked up: their take-back timers. */
  private readonly pickups = new Map<string, ReturnType<typeof setTimeout>>();
  /** Tokens to take out of the store, and why (which says what may be taken back). */
  readonly withdrawals = new Map<string, WithdrawReason>();
  /**
   * Tokens of waiters that left without a grant, for a while: a grant the
   * store makes to one of them (in the store step their wait ran out during,
   * or a handoff racing their departure) is taken back, unconditionally.
   */
  private readonly left = new RecentTokens(LEFT_REMEMBERED_MS);
  /**
   * Tokens whose grant was answered but not picked up in time, for a while: a
   * late second news of that grant is taken back again only while the store
   * still marks it not picked up. Any other token we are told about again
   * (delivered twice, by the release and by our own wake-up) is left alone:
   * its holder has it.
   */
  private readonly unclaimed = new RecentTokens(LEFT_REMEMBERED_MS);

  /** A grant that must be picked up: `lapse` runs if it is not within PICKUP_MS. */
  awaitPickup(token: string, lapse: () => void): void {
    this.clearPickup(token);
    this.pickups.set(token, setTimeout(lapse, PICKUP_MS));
  }

  clearPickup(token: string): void {
    clearTimeout(this.pickups.get(token));
    this.pickups.delete(token);
  }

  /** A grant not picked up is to be taken back; false when none was waiting for its pickup. */
  takeBack(token: string): boolean {
    if (!this.pickups.has(token)) return false;
    this.clearPickup(token);
    this.unclaimed.add(token);
    this.withdrawals.set(token, "unclaimed");
    return true;
  }

  /** Whether this grant was taken back for want of a pickup (an acknowledgement now comes too late). */
  wasTakenBack(token: string): boolean {
    return this.unclaimed.has(token);
  }

  /**
   * The take-backs to send, each read when its turn comes (the caller awaits
   * the store between them): one a pickup called off meanwhile is skipped.
   * Its holder has the answer; sent from a list taken before (while an
   * earlier take-back was in the store), it lost its lease to the next
   * waiter (test/lockObject/line/lineOrder.test.ts).
   */
  *toSend(): Generator<[string, WithdrawReason]> {
    for (const token of [...this.withdrawals.keys()]) {
      const reason = this.withdrawals.get(token);
      if (reason) yield [token, reason];
    }
  }

  /** Its holder has it: a take-back not yet sent is called off. */
  pickedUp(token: string): void {
    this.clearPickup(token);
    this.withdrawals.delete(token);
    this.left.delete(token);
    this.unclaimed.delete(token);
  }

  /** A waiter the store may have registered left the line: whatever it is granted is taken back. */
  departed(token: string): void {
    this.left.add(token);
    this.withdrawals.set(token, "left");
  }

  /**
   * Why a grant the store made to a token no longer in line is taken back:
   * its waiter left (whatever its pickup mark: nobody has its token), or it
   * was answered once and never picked up (only while still marked so). A
   * token delivered and picked up, or unknown, is never taken back.
   */
  strayReason(token: string): WithdrawReason | undefined {
    return this.left.has(token) ? "left" : this.unclaimed.has(token) ? "unclaimed" : undefined;
  }
}
