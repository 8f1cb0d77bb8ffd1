// Sends one signed Stripe event to the route, twice (a redelivery), and prints
// both answers: the second is the first one replayed. The signature is made by
// Stripe's own library, as Stripe signs a delivery.
//   node --env-file=.env.local send-event.mjs [http://localhost:3000/api/webhooks/stripe] [evt_id]
import Stripe from "stripe";

const url = process.argv[2] ?? "http://localhost:3000/api/webhooks/stripe";
const secret = process.env.STRIPE_WEBHOOK_SECRET;
if (!secret) throw new Error("set STRIPE_WEBHOOK_SECRET to the route's signing secret");
const id = process.argv[3] ?? `evt_test_${Date.now()}`;
const payload = JSON.stringify({
  id,
  object: "event",
  api_version: "2025-10-29.clover",
  created: Math.floor(Date.now() / 1000),
  type: "checkout.session.completed",
  livemode: false,
  pending_webhooks: 1,
  request: { id: null, idempotency_key: null },
  data: { object: { id: "cs_test_1", object: "checkout.session", amount_total: 2000, currency: "usd", payment_status: "paid" } },
});

async function deliver() {
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret });
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", "stripe-signature": signature }, body: payload });
  console.log(res.status, `replayed=${res.headers.get("idempotent-replayed") ?? "no"}`, await res.text());
}

await deliver();
await deliver();
