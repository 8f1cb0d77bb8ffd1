import type { LockObjectHost } from "../../lockObject/LockObjectHost.js";
import type { KindObjectPart } from "../../lockObject/KindObjectPart.js";
import { waitFault } from "../../lockObject/waitFault.js";
import type { WaitOutcome } from "../../lockObject/waitProtocol.js";
import { kindOps } from "../../store/types.js";
import { newOwnerToken, newRequestId } from "../../tokens.js";
import type { IdempotencyBeginResult, IdempotencyNews, IdempotencyOps } from "./types.js";
import type { IdempotencyWait } from "./wait.js";

/**
 * An idempotency key's part of its lock object: a begin that asked for
 * onExpire (begun and watched in one step), and on the Durable store the
 * operations themselves; completing or failing ends the watch quietly.
 * Keys have no line: nothing waits here.
 */
export class IdempotencyObjectPart implements KindObjectPart<"idempotency"> {
  readonly local: IdempotencyOps;
  readonly waiterCount = 0;

  constructor(private readonly host: LockObjectHost) {
    const here = host.local.idempotency;
    this.local = {
      ...here,
      complete: async (ref, input) => {
        const r = await here.complete(ref, input);
        if (r.status === "ok") this.hear({ fence: r.fence });
        return r;
      },
      fail: async (ref, input) => {
        const r = await here.fail(ref, input);
        if (r.status === "ok") this.hear({ fence: r.fence });
        return r;
      },
    };
  }

  /** A begin with onExpire: begun, and watched when it started the work. */
  async wait(req: IdempotencyWait): Promise<WaitOutcome<IdempotencyBeginResult>> {
    try {
      const r = await kindOps(this.host.storeOf(req.store), "idempotency").begin(req.ref, {
        token: req.newToken ?? newOwnerToken(),
        ttlMs: req.ttlMs,
        retainMs: req.retainMs,
        fingerprint: req.fingerprint,
        requestId: req.requestId ?? newRequestId(),
      });
      if (r.status === "started" && req.onExpire) {
        this.host.watchLease({
          kind: "idempotency",
          store: req.store,
          ref: req.ref,
          fence: r.fence,
          expiresAt: r.expiresAt,
          ttlMs: r.ttlMs,
          onExpire: req.onExpire,
        });
      }
      return { status: "granted", grant: r, pickup: false };
    } catch (err) {
      return waitFault("lock object idempotency begin", err);
    }
  }

  /** Given up or finished on purpose (Redis store: told by the Worker): the watch ends with no notification. */
  hear(news: IdempotencyNews): void {
    this.host.dropWatch(news.fence);
  }

  pickedUp(): void {}

  /** Idempotency keys have no line: nothing is granted from one, nothing is taken back. */
  takeBack(): void {}

  wasTakenBack(): boolean {
    return false;
  }
}
