#!/usr/bin/env node
// Smoke check for serve.mjs, no test runner: serve the Worker on the Durable
// store (no Upstash vars), GET /healthz, print its JSON, stop. Exits non-zero
// if anything fails, and must exit by itself (nothing left holding the loop).
import { startWorkerServer } from "./serve.mjs";

const server = await startWorkerServer({ vars: { API_KEYS: "local=holdfast-local-dev-key-123" } });
try {
  const res = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(10_000) });
  const body = await res.text();
  console.log(`${res.status} ${body}`);
  if (!res.ok) process.exitCode = 1;
} finally {
  await server.stop();
}
