import type { Context } from "hono";
import { logError } from "../logError.js";

/** How long to wait for the client to take an answer before leaving it to the lock object. */
const CONFIRM_WITHIN_MS = 1500;

/**
 * A delivered grant whose confirmation is lost would be taken back from a
 * holder that has it, so the confirmation is retried (well within PICKUP_MS).
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
 * A JSON answer whose delivery is confirmed: `confirm` runs once the body
 * has been taken whole by the connection (the stream was read to its end).
 * A client that vanished while it waited never takes it; then nothing is
 * confirmed and the lock object takes the grant back after its pickup time.
 * Workerd reports no disconnect of its own locally, so this is the signal
 * that works everywhere (the platform's abort, where it exists, comes first).
 */
export function jsonWithDeliveryConfirmed(c: Context, body: unknown, confirm: () => Promise<unknown>): Response {
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  let taken!: () => void;
  const takenWhole = new Promise<void>((resolve) => (taken = resolve));
  let step = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        step += 1;
        if (step === 1) controller.enqueue(bytes);
        else {
          // Asked for more: the body went out. (A gone client's connection never asks.)
          controller.close();
          taken();
        }
      },
    },
    { highWaterMark: 0 },
  );
  const confirmed = Promise.race([takenWhole.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), CONFIRM_WITHIN_MS))]).then(
    (taken) => (taken ? confirmWithRetries(confirm) : undefined),
  );
  try {
    c.executionCtx.waitUntil(confirmed);
  } catch {
    // No execution context (the app run as a plain function): the confirmation still runs.
  }
  return new Response(stream, { status: 200, headers: { "content-type": "application/json" } });
}
