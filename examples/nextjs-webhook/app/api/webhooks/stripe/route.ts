// A Stripe webhook as a Next.js App Router route handler (POST /api/webhooks/stripe).
// Every delivery's signature is checked first by Stripe's own library (a forged,
// stale or unsigned one gets 400 and takes no idempotency key); then holdfast's
// idempotent() runs the work once per event id. Stripe's redelivery of an event
// (its retry after a timeout or a non-2xx, a "Resend") gets the stored response
// again, with `Idempotent-Replayed: true`, and the work is not done twice.
import { Redis } from "@upstash/redis";
import { idempotent, senders } from "holdfast";
import Stripe from "stripe";

// UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN, from .env.local or your host's settings.
const redis = Redis.fromEnv();
// WebCrypto: the same check on the Node.js runtime (the default) and the edge runtime.
const webCrypto = Stripe.createSubtleCryptoProvider();

const once = idempotent((_request: Request, event: Stripe.Event) => handleEvent(event), {
  redis,
  namespace: "stripe-webhooks",
  // The event's `id` ("evt_..."): the same on every delivery of the event.
  key: senders.stripe,
  // What must match on a redelivery: the event's fixed fields, not the whole body (Stripe serializes
  // the event afresh for each attempt, and a field such as `pending_webhooks` may differ).
  fingerprint: ["type", "created"],
  // How long the work may take (the key is heartbeated meanwhile); a delivery that overlaps it gets 409 and Stripe retries.
  ttlMs: 30_000,
  // Stripe retries a live-mode event for up to 3 days: its first answer is kept for as long.
  retainMs: 3 * 24 * 60 * 60 * 1000,
});

export const POST = async (request: Request): Promise<Response> => {
  const signature = request.headers.get("stripe-signature");
  const secret = process.env.STRIPE_WEBHOOK_SECRET;
  if (!secret) throw new Error("set STRIPE_WEBHOOK_SECRET (whsec_...) to your endpoint's signing secret");
  let event: Stripe.Event;
  try {
    // The raw body, as Stripe signed it (a clone: idempotent() reads the body again for the key).
    const body = await request.clone().text();
    event = await Stripe.webhooks.constructEventAsync(body, signature ?? "", secret, undefined, webCrypto);
  } catch (err) {
    return Response.json({ error: "invalid_signature", message: err instanceof Error ? err.message : String(err) }, { status: 400 });
  }
  return once(request, event);
};

/**
 * Your work goes here: fulfil the order of `checkout.session.completed`, provision the
 * subscription of `invoice.paid`... This one counts the event in Redis, so you can see that a
 * redelivered event is not handled again (`handled` stays 1). A throw or a 5xx answer frees
 * the event id, so Stripe's retry runs this again.
 */
async function handleEvent(event: Stripe.Event): Promise<Response> {
  const handled = await redis.hincrby("nextjs-webhook:handled", event.id, 1);
  return Response.json({ received: true, event: event.id, type: event.type, handled });
}
