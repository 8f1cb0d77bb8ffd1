import { IDEMPOTENCY } from "./types.js";
import type { LockObjectHost } from "../../lockObject/LockObjectHost.js";
import type { KindEnding, KindObjectPart, WriteEffect } from "../../lockObject/KindObjectPart.js";
import type { WaitOutcome } from "../../lockObject/line/waitProtocol.js";
import { kindOps, type LockStore } from "../../store/types.js";
import { newOwnerToken, newRequestId } from "../../tokens.js";
import type { IdempotencyBeginResult, IdempotencyWriteNote, IdempotencyOps } from "./types.js";
import type { IdempotencyWait } from "./wait.js";

/**
 * An idempotency key's part of its lock object: a begin that asked for
 * onExpire (begun, its expiry kept, in one step), and on the Durable store the
 * operations themselves; completing or failing drops the expiry quietly.
 * Keys have no line: nobody is granted anything from one; a wait socket
 * awaits the end of a run (`ending`).
 */
export class IdempotencyObjectPart implements KindObjectPart<typeof IDEMPOTENCY, IdempotencyBeginResult> {
  readonly durableOps: IdempotencyOps;
  constructor(host: LockObjectHost) {
    const own = kindOps(host.ownStore, IDEMPOTENCY);
    this.durableOps = {
      ...own,
      complete: async (ref, input) => {
        const r = await own.complete(ref, input);
        if (r.status === "ok") host.noteWrite({ fence: r.fence }, "durable");
        return r;
      },
      fail: async (ref, input) => {
        const r = await own.fail(ref, input);
        if (r.status === "ok") host.noteWrite({ fence: r.fence }, "durable");
        return r;
      },
    };
  }

  /** A begin with onExpire: begun here, its expiry kept (by the core) when it started the work. */
  async tryOnce(store: LockStore, req: IdempotencyWait): Promise<WaitOutcome<IdempotencyBeginResult>> {
    const r = await kindOps(store, IDEMPOTENCY).begin(req.ref, {
      token: req.newToken ?? newOwnerToken(),
      ttlMs: req.ttlMs,
      retainMs: req.retainMs,
      fingerprint: req.fingerprint,
      requestId: req.requestId ?? newRequestId(),
      holder: req.holder,
    });
    return { status: "granted", grant: r, pickup: false };
  }

  expiryOf(r: IdempotencyBeginResult) {
    return r.status === "started" ? { fence: r.fence, expiresAt: r.expiresAt, ttlMs: r.ttlMs } : undefined;
  }

  /** Given up or finished on purpose (Redis store: told by the Worker): its expiry is dropped with no notification. */
  noteWrite(note: IdempotencyWriteNote): WriteEffect {
    return { endedExpiries: [note.fence] };
  }

  /**
   * A caller of a key someone else is working on waits on its wait socket
   * for the run to end (the core's line looks again at each note of a
   * complete or fail, and at the running owner's lease end). Each look
   * marks the run as waited for (inspectWaiting), so that on the Redis
   * store its complete is told here however the caller learned of the run:
   * a begin answered in_progress marks it too, but a caller may wait
   * without one. The socket's last message is the key's own answer:
   *
   *   completed  the stored result
   *   free       nobody runs it now (failed or lapsed): the caller may begin it
   */
  readonly ending: KindEnding = {
    look: async (store, ref) => {
      const state = await kindOps(store, IDEMPOTENCY).inspectWaiting(ref);
      if (state.state === "completed")
        return { ended: { type: "completed", response: state.response, completedAt: state.completedAt, fence: state.fence } };
      if (state.state === "absent") return { ended: { type: "free" } };
      return { endsInMs: state.expiresAt - Date.now() };
    },
  };
}
