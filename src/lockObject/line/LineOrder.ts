import { StoreUnavailableError } from "../../errors.js";
import type { CurrentHolder } from "../../errors.js";
import type { LockRef } from "../../store/types.js";
import type { LockStore } from "../../store/types.js";
import { newOwnerToken } from "../../tokens.js";
import type { QueuedWaiter, LinePolicy } from "./LinePolicy.js";
import { logError } from "../../logError.js";
import type { WaitOptions, WaitOutcome } from "./waitProtocol.js";
import { GrantsOwed } from "./grantsOwed.js";
import { memoryTimers, type ObjectTimers } from "../timers.js";

interface Waiter<Req, Grant> extends QueuedWaiter<Req> {
  settled: boolean;
  /** It was the head in a store step: the store may have it registered or granted. */
  admitted: boolean;
  settle(outcome: WaitOutcome<Grant>): void;
}

/** Never try the store again sooner than this, whatever it answered (no spinning). */
const MIN_WAKE_MS = 5;

/**
 * A lock object's waiters, first come, first served, for any lock kind (the
 * kind's LinePolicy says what the store grants). Waiters (open requests,
 * or wait sockets) live in memory; their deadlines and the wake-up at the
 * holder's lease end are the object's timers (timers.ts: short ones in
 * memory, long ones on the alarm, so an object whose waiters are all
 * sockets can hibernate, and a wait socket's place is rebuilt when it
 * wakes). A grant's pickup timer stays in memory: a storage write on the
 * handoff path would hold the answer back until stored. Every store step (admitting
 * the head, withdrawing a waiter that left) runs on one loop, one at a time,
 * in order; timing comes from the store's answers as remaining times, so its
 * clock and ours need not agree.
 *
 * A grant made from the queue must be picked up: the Worker confirms that
 * the answer reached the client (pickedUp), or the holder heartbeats. If
 * neither happens within PICKUP_MS the grant is taken back (the store only
 * takes back a grant still marked not picked up), so a waiter whose client
 * vanished holds the lock for at most that long. A waiter that left the line
 * before any grant reached it has whatever the store granted it taken back
 * unconditionally: nobody knows its token.
 */
export class LineOrder<Req, Grant> {
  private readonly waiters: Array<Waiter<Req, Grant>> = [];
  /** Pickups pending and take-backs to send (grantsOwed.ts). */
  private readonly owed = new GrantsOwed();
  /** Cancels the pending wake-up (the holder's lease end, or a back-off). */
  private cancelWake: (() => void) | undefined;
  /** The store failing now: waiters whose wait ends meanwhile get 503, not 409. */
  private fault: StoreUnavailableError | undefined;
  private faults = 0;
  /** Our estimate of when the holder's lease ends, for retryAfterMs. */
  private holderFreeAt: number | undefined;
  /** Who held it at the last store step that could not grant, where the store said: told to a wait that runs out. */
  private holderInWay: CurrentHolder | undefined;
  private running = false;
  private wanted = false;
  private idleWanted = false;

  constructor(
    private readonly policy: LinePolicy<Req, Grant>,
    private readonly host: { store(): LockStore; ref: LockRef; timers?: ObjectTimers; changed?: () => void },
  ) {}

  get length(): number {
    return this.waiters.length;
  }

  /**
   * Waits in line up to waitMs; the signal (client disconnect) takes the
   * waiter out. Every waiter gets a fresh token of the line's own, never one
   * a client could send again: a departed waiter's token may still have a
   * take-back on its way, which must never meet a live holder.
   */
  wait(req: Req, waitMs: number, signal?: AbortSignal, options: WaitOptions = {}): Promise<WaitOutcome<Grant>> {
    return new Promise((resolve) => {
      let cancelTimer: (() => void) | undefined;
      const waiter: Waiter<Req, Grant> = {
        token: options.token ?? newOwnerToken(),
        req,
        // A grant that must be acknowledged is marked for pickup even on arrival, so it can be taken back.
        firstTry: this.waiters.length === 0 && !options.mustPickUp,
        settled: false,
        admitted: options.registered === true,
        settle: (outcome) => {
          if (waiter.settled) return;
          waiter.settled = true;
          cancelTimer?.();
          resolve(outcome);
        },
      };
      const endIn = (ms: number) => {
        cancelTimer?.();
        cancelTimer = this.timers.after(ms, () => this.leave(waiter, this.timeoutOutcome()));
      };
      endIn(waitMs);
      options.renewable?.((ms) => {
        if (!waiter.settled) endIn(ms);
      });
      // Its client left: nobody reads this answer.
      signal?.addEventListener("abort", () => this.leave(waiter, { status: "locked", retryAfterMs: 1 }));
      this.waiters.push(waiter);
      this.host.changed?.();
      // Only a new head tries the store: the rest are reached through it.
      if (this.waiters.length === 1) this.letHeadTry();
    });
  }

  /** A release handed the lock to this waiter (the store granted its registered token); the next head's turn follows. */
  handedOver(token: string, grant: Grant): void {
    this.deliver(token, grant, true); // a handoff always follows a wait
    this.timers.after(0, () => this.letHeadTry()); // a turn afterAnswer: the grant goes out before the next head's store step (Redis: a call)
  }

  /**
   * The grant's client is gone before it acknowledged the grant (its wait
   * socket closed): take it back now, not after the pickup time.
   */
  takeBack(token: string): void {
    if (this.owed.takeBack(token)) this.letHeadTry();
  }

  /** Whether this grant was taken back for want of a pickup (an acknowledgement now comes too late). */
  wasTakenBack(token: string): boolean {
    return this.owed.wasTakenBack(token);
  }

  /** The Worker delivered this grant's answer (or the holder heartbeated): the holder has it. */
  pickedUp(token: string): void {
    this.owed.pickedUp(token);
  }

  /**
   * The lock became free without a handoff (a release, a lapse): let the head
   * try. `released`: a release's note, so with an empty line the policy's
   * idle step runs (in the same loop as every other store step).
   */
  letHeadTry(released = false): void {
    this.wanted = true;
    if (released) this.idleWanted = true;
    if (this.running) return;
    this.running = true;
    void this.run().finally(() => {
      this.running = false;
    });
  }

  /** Try the store again in `ms` (the holder's remaining lease, or a back-off). */
  private wakeIn(ms: number): void {
    this.cancelWake?.();
    this.cancelWake = this.timers.after(Math.max(MIN_WAKE_MS, ms), () => {
      this.cancelWake = undefined;
      if (this.waiters.length || this.owed.withdrawals.size) this.letHeadTry();
    });
  }

  private get timers(): ObjectTimers {
    return this.host.timers ?? memoryTimers;
  }

  private async run(): Promise<void> {
    while (this.wanted) {
      this.wanted = false;
      if (!(await this.runWithdrawals())) return;
      await this.admitHeads();
      if (this.idleWanted && !this.waiters.length) await this.runIdle();
      this.idleWanted = false;
    }
  }

  private async runIdle(): Promise<void> {
    try {
      await this.policy.idle?.(this.host.store(), this.host.ref);
    } catch (err) {
      // A store fault: a leftover gate still ends on its own, a few seconds after the leases it stood behind.
      if (!(err instanceof StoreUnavailableError)) logError("lock object idle step", err);
    }
  }

  /** False when the store failed: the alarm retries. */
  private async runWithdrawals(): Promise<boolean> {
    for (const [token, reason] of this.owed.toSend()) {
      try {
        await this.policy.withdraw(this.host.store(), this.host.ref, token, reason);
        this.owed.withdrawals.delete(token);
      } catch (err) {
        if (this.noteFault(err)) return false;
        this.owed.withdrawals.delete(token); // a bug, logged: that grant lapses at its own TTL
      }
    }
    return true;
  }

  private async admitHeads(): Promise<void> {
    while (this.waiters.length) {
      const front = this.waiters.slice(0, this.policy.batch).map((w) => ({ ...w, firstTry: w.firstTry && !w.admitted }));
      const more = this.waiters.length > front.length;
      const head = this.waiters[0];
      for (const w of this.waiters.slice(0, this.policy.batch)) w.admitted = true;
      let admission: Awaited<ReturnType<LinePolicy<Req, Grant>["admit"]>>;
      try {
        admission = await this.policy.admit(this.host.store(), this.host.ref, front, more);
      } catch (err) {
        if (this.noteFault(err)) return;
        // A bug: the head gets a 500 and the line moves on; nothing loops on it.
        this.leave(head, { status: "internal", message: String((err as Error)?.message ?? err) });
        continue;
      }
      this.fault = undefined;
      this.faults = 0;
      for (const g of admission.granted) this.deliver(g.token, g.grant, g.pickup);
      for (const r of admission.refused ?? []) this.refuse(r.token, { status: "refused", code: r.code, message: r.message });
      if (admission.retryInMs !== undefined) {
        this.holderFreeAt = Date.now() + admission.retryInMs;
        this.holderInWay = admission.current;
        this.wakeIn(admission.retryInMs);
        return;
      }
      if (!admission.granted.length && !admission.refused?.length) {
        this.leave(head, { status: "internal", message: "the store neither granted nor queued the waiter" });
      }
    }
    this.cancelWake?.();
    this.cancelWake = undefined;
  }

  private deliver(token: string, grant: Grant, pickup: boolean): void {
    const i = this.waiters.findIndex((w) => w.token === token);
    const waiter = this.waiters[i];
    if (!waiter) {
      // Its client left while the store granted it: take the grant back (whatever
      // its pickup mark: nobody has its token). A grant answered once and never
      // picked up is taken back only while still marked so; a token delivered
      // and picked up, or unknown to us, is never taken back from here.
      const reason = this.owed.strayReason(token);
      if (reason) {
        this.owed.withdrawals.set(token, reason);
        this.wanted = true;
      }
      return;
    }
    this.waiters.splice(i, 1);
    this.host.changed?.();
    this.owed.clearPickup(token); // a retried wait granted again: one take-back timer
    if (!pickup) {
      waiter.settle({ status: "granted", grant, pickup: false });
      return;
    }
    // Nobody picked it up in time: take it back, and the line moves on.
    this.owed.awaitPickup(token, () => this.takeBack(token));
    waiter.settle({ status: "granted", grant, pickup: true });
  }

  /** The store says this waiter can never be granted as asked: it leaves with that answer (nothing of it is stored). */
  private refuse(token: string, outcome: WaitOutcome<Grant>): void {
    const i = this.waiters.findIndex((w) => w.token === token);
    if (i < 0) return;
    const [waiter] = this.waiters.splice(i, 1);
    this.host.changed?.();
    waiter.settle(outcome);
  }

  /** A waiter leaves without a grant (its wait ran out, its client went away, a bug). */
  private leave(waiter: Waiter<Req, Grant>, outcome: WaitOutcome<Grant>): void {
    if (waiter.settled) return;
    waiter.settle(outcome);
    const i = this.waiters.indexOf(waiter);
    if (i >= 0) this.waiters.splice(i, 1);
    this.host.changed?.();
    if (waiter.admitted) this.owed.departed(waiter.token);
    if (waiter.admitted || i === 0) this.letHeadTry();
  }

  private timeoutOutcome(): WaitOutcome<Grant> {
    if (this.fault) return { status: "unavailable", message: this.fault.message, outcome: "unknown" };
    const current = this.holderInWay && this.holderInWay.expiresAt > Date.now() ? { current: this.holderInWay } : {};
    return { status: "locked", retryAfterMs: Math.max(1, (this.holderFreeAt ?? Date.now()) - Date.now()), ...current };
  }

  /** A store fault: back off and try again. False when the error is not a store fault. */
  private noteFault(err: unknown): boolean {
    if (!(err instanceof StoreUnavailableError)) {
      logError("lock object queue", err);
      return false;
    }
    this.fault = err;
    this.faults += 1;
    this.wakeIn(Math.min(2000, 50 * 2 ** this.faults));
    return true;
  }
}
