// A webhook receiver on Cloudflare Workers: every delivery's signature is
// checked first (a forged or stale one is refused and nothing is done), then
// holdfast's idempotency middleware runs the handler once per event id. The
// sender's redelivery of an event (its retry after a timeout, a duplicate)
// gets the stored response again, with `Idempotent-Replayed: true`, and the
// work is not done twice.
import { Redis } from "@upstash/redis/cloudflare";
import { Hono } from "hono";
import { fromJsonBody, idempotency } from "holdfast/hono";
import { verifySignature } from "./signature.js";

type Env = {
  WEBHOOK_SIGNING_SECRET: string;
  UPSTASH_REDIS_REST_URL: string;
  UPSTASH_REDIS_REST_TOKEN: string;
};

interface PaymentEvent {
  id: string;
  type: string;
  data?: { object?: { id?: string; amount?: number } };
}

const app = new Hono<{ Bindings: Env }>();

app.post(
  "/webhooks/payments",
  // 1. The signature, over the raw body (Hono keeps it, so the next steps can read it again).
  async (c, next) => {
    const check = await verifySignature(c.req.header("webhook-signature"), await c.req.text(), c.env.WEBHOOK_SIGNING_SECRET);
    if (!check.ok) return c.json({ error: "invalid_signature", message: check.reason }, 400);
    await next();
  },
  // 2. Once per event id: the first delivery runs the handler, a redelivery gets its stored answer.
  (c, next) => idempotency({ redis: Redis.fromEnv(c.env), key: fromJsonBody("id"), ttlMs: 30_000 })(c, next),
  // 3. The work.
  async (c) => {
    const event = await c.req.json<PaymentEvent>();
    const processed = await handleEvent(event, Redis.fromEnv(c.env));
    return c.json({ received: true, event: event.id, ...processed });
  },
);

/**
 * Your work goes here. This one counts the event in Redis, so you can see
 * that a redelivered event is not processed again (`processed` stays 1).
 */
async function handleEvent(event: PaymentEvent, redis: Redis): Promise<{ processed: number }> {
  const processed = await redis.hincrby("webhook-receiver:processed", event.id, 1);
  return { processed };
}

export default app;
