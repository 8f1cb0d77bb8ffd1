// Sends one signed payment event to the receiver, twice (a redelivery), and
// prints both answers: the second is the first one replayed.
//   WEBHOOK_SIGNING_SECRET=whsec_local node send-event.mjs [http://localhost:8788] [evt_id]
const url = `${process.argv[2] ?? "http://localhost:8788"}/webhooks/payments`;
const secret = process.env.WEBHOOK_SIGNING_SECRET;
if (!secret) throw new Error("set WEBHOOK_SIGNING_SECRET to the receiver's secret");
const id = process.argv[3] ?? `evt_${Date.now()}`;
const body = JSON.stringify({ id, type: "payment_intent.succeeded", data: { object: { id: "pi_1", amount: 2000 } } });

async function deliver() {
  const t = Math.floor(Date.now() / 1000);
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${t}.${body}`)));
  const v1 = [...mac].map((b) => b.toString(16).padStart(2, "0")).join("");
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", "webhook-signature": `t=${t},v1=${v1}` }, body });
  console.log(res.status, `replayed=${res.headers.get("idempotent-replayed") ?? "no"}`, await res.text());
}

await deliver();
await deliver();
