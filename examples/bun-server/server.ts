// A GitHub webhook receiver on Bun.serve (POST /webhooks/github). Every
// delivery's signature (X-Hub-Signature-256) is checked first by GitHub's own
// library (a forged or unsigned one gets 400 and takes no idempotency key);
// then holdfast's idempotent() runs the work once per delivery id
// (X-GitHub-Delivery). A redelivery (GitHub's "Redeliver", a retry of yours)
// gets the stored response again, with `Idempotent-Replayed: true`, and the
// work is not done twice.
import { verify } from "@octokit/webhooks-methods";
import { Redis } from "@upstash/redis";
import { idempotent, senders } from "holdfast";

// Bun reads .env by itself: GITHUB_WEBHOOK_SECRET, UPSTASH_REDIS_REST_URL, UPSTASH_REDIS_REST_TOKEN.
const secret = Bun.env.GITHUB_WEBHOOK_SECRET;
if (!secret) throw new Error("set GITHUB_WEBHOOK_SECRET to your webhook's secret");
const redis = Redis.fromEnv();

const once = idempotent((request: Request) => handleDelivery(request), {
  redis,
  namespace: "github-webhooks",
  // X-GitHub-Delivery: a GUID per delivery, kept when the delivery is redelivered.
  key: senders.github,
  // A request without one is no GitHub delivery: 400 naming the header.
  required: true,
  // How long the work may take (the key is heartbeated meanwhile); GitHub waits 10 s for an answer.
  ttlMs: 10_000,
});

const server = Bun.serve({
  port: Number(Bun.env.PORT ?? 3000),
  routes: {
    "/webhooks/github": {
      POST: async (request) => {
        // The raw body, as GitHub signed it (a clone: idempotent() reads the body again).
        const body = await request.clone().text();
        const signature = request.headers.get("x-hub-signature-256");
        if (!signature || !(await verify(secret, body, signature))) {
          return Response.json({ error: "invalid_signature" }, { status: 400 });
        }
        return once(request);
      },
    },
  },
  fetch: () => Response.json({ error: "not_found" }, { status: 404 }),
});
console.log(`Listening on ${server.url}`);

/**
 * Your work goes here: deploy on `push`, label a new issue... This one counts the delivery in
 * Redis, so you can see that a redelivery is not handled again (`handled` stays 1). A throw or a
 * 5xx answer frees the delivery id, so a redelivery runs this again.
 */
async function handleDelivery(request: Request): Promise<Response> {
  const event = request.headers.get("x-github-event");
  const delivery = request.headers.get("x-github-delivery") as string;
  const payload = (await request.json()) as { action?: string; repository?: { full_name?: string } };
  const handled = await redis.hincrby("bun-server:handled", delivery, 1);
  return Response.json({
    received: true,
    event,
    action: payload.action ?? null,
    repository: payload.repository?.full_name ?? null,
    delivery,
    handled,
  });
}
