#!/usr/bin/env node
// The handoff as a client outside sees it (issue 46): from a holder's release to the waiter's grant, read
// whole over an HTTP long-poll, or as the wait socket's `granted`, by plain fetch and WebSocket against a
// running service (`npm start`, `npm run start:redis`, or a deploy): no bench client, no tsx.
//
//   npm start &   # or npm run start:redis
//   npm run bench:handoff-raw            # BASE (default http://127.0.0.1:8787), KEY (the local key), N (40)
//
// Each round: A takes the lock; B waits for it (waitMs 10000) over HTTP, or on a wait socket; 60 ms later A
// releases, and the time runs from A's release request to B's grant. Prints the p50s and their ratio.
const BASE = process.env.BASE ?? `http://127.0.0.1:${process.env.PORT ?? "8787"}`;
const KEY = process.env.KEY ?? "holdfast-local-dev-key";
const N = Number(process.env.N ?? 40);
const h = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
const post = (p, b) => fetch(`${BASE}${p}`, { method: "POST", headers: h, body: JSON.stringify(b) });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
async function httpRound(name) {
  const a = await (await post(`/v1/locks/${name}/acquire`, { ttlMs: 10000 })).json();
  const waiting = post(`/v1/locks/${name}/acquire`, { ttlMs: 10000, waitMs: 10000 }).then(async (r) => ({
    body: await r.json(),
    at: performance.now(),
  }));
  await sleep(60);
  const t0 = performance.now();
  await (await post(`/v1/locks/${name}/release`, { token: a.token })).json();
  const { body, at } = await waiting;
  await (await post(`/v1/locks/${name}/release`, { token: body.token })).json();
  return at - t0;
}
/** The API key as the subprotocol a browser would offer (docs/API.md, "Waiting over a WebSocket"). */
function keyProtocol(key) {
  return `holdfast.key.${Buffer.from(key).toString("base64url")}`;
}
async function socketRound(name) {
  const a = await (await post(`/v1/locks/${name}/acquire`, { ttlMs: 10000 })).json();
  const ws = new WebSocket(`${BASE.replace("http", "ws")}/v1/locks/${name}/wait`, ["holdfast.v1", keyProtocol(KEY)]);
  await new Promise((r) => ws.addEventListener("open", r, { once: true }));
  let granted;
  const got = new Promise((r) =>
    ws.addEventListener("message", (e) => {
      const m = JSON.parse(e.data);
      if (m.type === "granted") {
        granted = m;
        r(performance.now());
      }
    }),
  );
  ws.send(JSON.stringify({ type: "acquire", ttlMs: 10000, waitMs: 10000 }));
  await sleep(60);
  const t0 = performance.now();
  await (await post(`/v1/locks/${name}/release`, { token: a.token })).json();
  const at = await got;
  ws.send(JSON.stringify({ type: "ack", token: granted.grant.token }));
  await new Promise((r) => ws.addEventListener("close", r, { once: true }));
  await (await post(`/v1/locks/${name}/release`, { token: granted.grant.token })).json();
  return at - t0;
}
const http = [],
  sock = [];
for (let i = 0; i < 5; i++) {
  await httpRound(`raw-warm-h${i}`);
  await socketRound(`raw-warm-s${i}`);
}
for (let i = 0; i < N; i++) {
  http.push(await httpRound(`raw-h-${process.pid}-${i % 4}`));
  sock.push(await socketRound(`raw-s-${process.pid}-${i % 4}`));
}
console.log(
  `HTTP long-poll p50 ${p50(http).toFixed(2)} ms, socket p50 ${p50(sock).toFixed(2)} ms, ratio ${(p50(http) / p50(sock)).toFixed(2)}x (n=${N})`,
);
