#!/usr/bin/env node
// Smoke check for serve.mjs, no test runner. For each engine (default first): serve the
// Worker on the Durable store (no Upstash vars), GET /healthz and print its JSON, acquire a
// lock with a key full of characters the workerd config must escape, stop, and check that
// the port no longer answers. Exits non-zero if anything fails, and must exit by itself
// (nothing left holding the loop).
import { resolveEngine, startWorkerServer } from "./serve.mjs";

// Quotes and backslashes: the vars reach the workerd engine through a Cap'n Proto string.
const KEY = `k"ey\\with\\\\quotes"and'\\x41`;
const vars = { API_KEYS: `local=holdfast-local-dev-key-123, smoke=${KEY}` };

const check = (/** @type {boolean} */ ok, /** @type {string} */ what) => {
  if (!ok) {
    console.error(`FAIL: ${what}`);
    process.exitCode = 1;
  }
};

const engines = [...new Set([resolveEngine(), "workerd", "miniflare"])];
for (const engine of /** @type {Array<"workerd" | "miniflare">} */ (engines)) {
  const started = performance.now();
  const server = await startWorkerServer({ vars, engine });
  const startMs = Math.round(performance.now() - started);
  try {
    const res = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(10_000) });
    const body = await res.text();
    console.log(`${engine} (started in ${startMs} ms): /healthz ${res.status} ${body}`);
    check(res.ok, `${engine}: /healthz ${res.status}`);
    const acquire = await fetch(`${server.url}/v1/locks/smoke/acquire`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ ttlMs: 5000 }),
      signal: AbortSignal.timeout(10_000),
    });
    console.log(`${engine}: acquire with the escaped key: ${acquire.status} ${await acquire.text()}`);
    check(acquire.status === 200, `${engine}: acquire ${acquire.status}`);
  } finally {
    await server.stop();
  }
  const after = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(2000) }).then(
    (r) => `answered ${r.status}`,
    () => "refused",
  );
  check(after === "refused", `${engine}: after stop(), ${server.url} ${after}`);
}
