// Sends one signed GitHub delivery to the server, twice (a redelivery), and
// prints both answers: the second is the first one replayed. The signature is
// made by GitHub's own library, as GitHub signs a delivery.
//   bun send-event.ts [http://localhost:3000/webhooks/github] [delivery id]
import { sign } from "@octokit/webhooks-methods";

const url = process.argv[2] ?? "http://localhost:3000/webhooks/github";
const secret = Bun.env.GITHUB_WEBHOOK_SECRET;
if (!secret) throw new Error("set GITHUB_WEBHOOK_SECRET to the server's secret");
const delivery = process.argv[3] ?? crypto.randomUUID();
const payload = JSON.stringify({
  action: "opened",
  issue: { number: 1, title: "Found a bug" },
  repository: { full_name: "octo-org/octo-repo" },
  sender: { login: "octocat" },
});

async function deliver() {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "user-agent": "GitHub-Hookshot/044aadd",
      "x-github-event": "issues",
      "x-github-delivery": delivery,
      "x-hub-signature-256": await sign(secret as string, payload),
    },
    body: payload,
  });
  console.log(res.status, `replayed=${res.headers.get("idempotent-replayed") ?? "no"}`, await res.text());
}

await deliver();
await deliver();
