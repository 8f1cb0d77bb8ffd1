import type { Context } from "hono";
import { PICKUP_MS } from "../limits.js";
import { logError } from "../logError.js";
import type { GrantDelivery } from "../lockObject/waitInLine.js";

/**
 * How long to wait for the client to take an answer before leaving it to the
 * lock object: its pickup time. The object's pickup time started before this
 * answer was made, so an answer taken later than this was taken back already
 * and no confirmation could keep it; one taken sooner is confirmed however
 * late, since until the object sends its take-back to the store the
 * confirmation calls it off (after, it changes nothing). It was 1.5 s: a body
 * taken between then and the take-back was never confirmed, and its holder,
 * which had the whole answer, lost the lease to the next waiter
 * (test/http/deliveryConfirmed.test.ts).
 */
const CONFIRM_WITHIN_MS = PICKUP_MS;

/**
 * A delivered grant whose confirmation is lost would be taken back from a
 * holder that has it, so the confirmation is retried (within PICKUP_MS, where
 * the answer was taken early enough for that).
 */
async function confirmWithRetries(confirm: () => Promise<unknown>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await confirm();
      return;
    } catch (err) {
      if (attempt >= 4) {
        logError("confirming a grant's delivery failed 4 times", err);
        return;
      }
      await new Promise((r) => setTimeout(r, 25 * 2 ** attempt));
    }
  }
}

/**
 * How long the answer's last byte waits behind the rest: one turn of the
 * event loop. workerd (since late 2026) reads a small body to its end before
 * it writes any of it, so "read to the end" no longer means "written to the
 * client". Held back, the last byte is written only after the rest went out,
 * and by then the connection of a client that is gone has failed the write
 * and the stream is cancelled. A turn is enough for that (measured with
 * `BENCH_ONLY=2,8 npm run bench`: 30 vanished HTTP waiters ahead of a live
 * one cost it 38-97 ms in all, the same as with 1 or 5 ms held back, and
 * none held the lock for the pickup time); 5 ms cost every handoff from the
 * line 5 ms (HTTP long-poll handoff p50 12.3 -> 5.6 ms on Redis, 11.2 -> 4.3
 * ms on the Durable store, against 4.4 and 3.4 ms over a socket). On grants
 * from the line only (a fresh grant needs no pickup).
 */
const LAST_BYTE_AFTER_MS = 0;

/**
 * A JSON answer whose delivery is confirmed: `confirm` runs once the body
 * has been taken whole by the connection (the stream was read to its end).
 * A client that vanished while it waited never takes it: its connection
 * fails the write and the stream is cancelled, and then `takeBack` returns
 * the grant to the line at once. Should neither happen, nothing is confirmed
 * and the lock object takes the grant back after its pickup time. Workerd
 * reports no disconnect of its own locally, so this is the signal that
 * works everywhere (the platform's abort, where it exists, comes first).
 */
export function jsonWithDeliveryConfirmed(c: Context, body: unknown, delivery: GrantDelivery): Response {
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  let taken!: () => void;
  const takenWhole = new Promise<void>((resolve) => (taken = resolve));
  let step = 0;
  const later = (p: Promise<unknown>) => {
    try {
      c.executionCtx.waitUntil(p);
    } catch {
      // No execution context (the app run as a plain function): the promise still runs.
    }
  };
  const stream = new ReadableStream<Uint8Array>(
    {
      cancel() {
        // The client's connection failed the write: nobody will read this grant.
        if (step < 3) later(delivery.takeBack().catch((err) => logError("giving back an undelivered grant", err)));
      },
      async pull(controller) {
        step += 1;
        if (step === 1) controller.enqueue(bytes.subarray(0, bytes.length - 1));
        else if (step === 2) {
          await new Promise((r) => setTimeout(r, LAST_BYTE_AFTER_MS));
          controller.enqueue(bytes.subarray(bytes.length - 1));
        } else {
          // Asked for more after the last byte: the body went out. (A gone client's connection fails first.)
          controller.close();
          taken();
        }
      },
    },
    { highWaterMark: 0 },
  );
  const confirmed = Promise.race([takenWhole.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), CONFIRM_WITHIN_MS))]).then(
    (taken) => (taken ? confirmWithRetries(() => delivery.confirm()) : undefined),
  );
  later(confirmed);
  return new Response(stream, { status: 200, headers: { "content-type": "application/json" } });
}
