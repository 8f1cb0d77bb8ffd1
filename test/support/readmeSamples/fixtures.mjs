// What each README and docs/ sample leaves to its reader (the functions it calls, the
// queue, the Hono app), and what it is seen to do: plain JavaScript, run beside the
// sample under Node 20 and 24 (docs/ samples: 24) by driver.mjs, with the package as built for users
// (node_modules/holdfast). test/docs/readmeSamples.test.ts asserts on what these
// report. Globals, because a sample uses them as free names.
import http from "node:http";
import { Redis } from "@upstash/redis";
import { Hono } from "hono";
import { Idempotency, Mutex, RwLock, Semaphore } from "holdfast";
import { fenceKeyOf, RedisFence } from "holdfast/fence";

const env = process.env;
const unique = (label) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

/** The Worker's HTTP API with the sample's key: the answer's JSON, its status as `status`. */
async function api(path, body) {
  const res = await fetch(`${env.HOLDFAST_URL}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${env.HOLDFAST_API_KEY}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, ...(await res.json()) };
}

async function until(read, ok, timeoutMs = 15_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A port free on 127.0.0.1 now. */
function freePort() {
  return new Promise((resolve) => {
    const server = http.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Serves a Hono app on 127.0.0.1 through node:http (what @hono/node-server does), answers its URL and a stop. */
function serve(app) {
  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const request = new Request(`http://127.0.0.1${req.url}`, {
      method: req.method,
      headers: Object.entries(req.headers).map(([k, v]) => [k, String(v)]),
      body: req.method === "GET" ? undefined : Buffer.concat(chunks),
    });
    const answer = await app.fetch(request);
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve({ url: `http://127.0.0.1:${server.address().port}`, stop: () => server.close() })),
  );
}

/** buildReport for the client samples: what the Worker says about the lock while the report is built. */
function clientReport(seen) {
  return async ({ signal, fence }) => {
    const during = await api("/v1/locks/nightly-report");
    seen.report = { fence, heldFence: during.held ? during.fence : null, signal: signal instanceof AbortSignal && !signal.aborted };
  };
}

export const fixtures = {
  client: {
    before() {
      const seen = { pdfRuns: 0 };
      globalThis.id = unique("doc");
      globalThis.buildReport = clientReport(seen);
      globalThis.renderPdf = async (docId) => {
        seen.pdfRuns++;
        return { pdf: docId };
      };
      return { seen };
    },
    async after() {
      return {
        heldAfter: (await api("/v1/locks/nightly-report")).held,
        exportState: (await api(`/v1/idempotency/export-${globalThis.id}`)).state,
      };
    },
  },
  "client-await-using": {
    before() {
      const seen = {};
      globalThis.buildReport = clientReport(seen);
      return { seen };
    },
    async after() {
      return { heldAfter: (await api("/v1/locks/nightly-report")).held };
    },
  },
  "client-lease-travels": {
    before() {
      const seen = { sent: [] };
      // A queue carries JSON: the consumer gets a copy, not the object.
      globalThis.queue = { send: async (body) => seen.sent.push(JSON.parse(JSON.stringify(body))) };
      Object.defineProperty(globalThis, "message", { get: () => ({ body: seen.sent.at(-1) }) });
      globalThis.sendInvoice = async ({ fence }) => {
        const during = await api("/v1/locks/invoice-42");
        seen.invoice = { fence, heldFence: during.held ? during.fence : null };
      };
      return { seen };
    },
    async after() {
      return { heldAfter: (await api("/v1/locks/invoice-42")).held };
    },
  },
  "verify-notification": {
    async before() {
      const seen = { stale: [] };
      globalThis.app = new Hono();
      globalThis.env = { HOLDFAST_NOTIFY_KEY: (await api("/v1/notifications/key")).key };
      globalThis.markStale = async (...args) => seen.stale.push(args);
      return { seen };
    },
    async after({ seen }) {
      const hooks = await serve(globalThis.app);
      try {
        // A lease that lapses (never released) makes the service POST its signed notification to the sample's route.
        const name = unique("lapse");
        const grant = await api(`/v1/locks/${name}/acquire`, { ttlMs: 200, onExpire: `${hooks.url}/hooks/lapsed` });
        await until(
          () => seen.stale.length,
          (n) => n > 0,
        );
        const forged = await fetch(`${hooks.url}/hooks/lapsed`, {
          method: "POST",
          headers: { "x-lock-signature": `t=${Date.now()},v1=${"0".repeat(64)}` },
          body: JSON.stringify({ kind: "mutex", namespace: "default", name, fence: grant.fence, expiredAt: Date.now() }),
        });
        return { lapsed: { name, fence: grant.fence }, forgedStatus: forged.status };
      } finally {
        hooks.stop();
      }
    },
  },
  "library-mutex": {
    before() {
      const seen = {};
      const lock = new Mutex(Redis.fromEnv(), "nightly-report");
      globalThis.writeReport = async ({ fence }) => {
        const during = await lock.inspect();
        seen.write = { fence, heldFence: during.held ? during.fence : null };
      };
      return { seen, lock };
    },
    async after({ lock }) {
      return { heldAfter: (await lock.inspect()).held };
    },
  },
  "library-rwlock-semaphore": {
    before() {
      const seen = { calls: [] };
      const redis = Redis.fromEnv();
      const catalog = new RwLock(redis, "catalog");
      const exports = new Semaphore(redis, "pdf-exports", { limit: 4 });
      globalThis.readCatalog = async () => seen.calls.push(["read", (await catalog.inspect()).mode]);
      globalThis.rebuildCatalog = async (fence) => seen.calls.push(["write", (await catalog.inspect()).mode, typeof fence]);
      globalThis.renderPdf = async () => seen.calls.push(["render", (await exports.inspect()).used]);
      return { seen, catalog, exports };
    },
    async after({ catalog, exports }) {
      return { catalogAfter: (await catalog.inspect()).mode, permitsUsedAfter: (await exports.inspect()).used };
    },
  },
  "hono-webhook": {
    before() {
      const seen = { credited: [] };
      globalThis.creditAccount = async (event) => seen.credited.push(event.id);
      return { seen };
    },
    async after(_ctx, sample) {
      const eventId = unique("evt");
      const deliveries = [];
      for (let i = 0; i < 2; i++) {
        const res = await sample.default.request(
          "/webhooks/payments",
          { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ id: eventId }) },
          { UPSTASH_REDIS_REST_URL: env.UPSTASH_REDIS_REST_URL, UPSTASH_REDIS_REST_TOKEN: env.UPSTASH_REDIS_REST_TOKEN },
        );
        deliveries.push({ status: res.status, replayed: res.headers.get("idempotent-replayed"), body: await res.json() });
      }
      return { eventId, deliveries };
    },
  },
  "fence-redis": {
    async after() {
      const redis = Redis.fromEnv();
      const fence = Number(await redis.get(fenceKeyOf("orders:42")));
      // An older holder's write after the sample: refused, the value kept.
      const stale = await new RedisFence(redis).set("orders:42", fence - 1, "late").catch((err) => err.code);
      return { value: await redis.get("orders:42"), fence, stale };
    },
  },
  "library-run-once": {
    before() {
      const seen = { runs: 0 };
      globalThis.buildReport = async (day, { fence }) => {
        seen.runs++;
        return { day, fence };
      };
      return { seen };
    },
    async after() {
      const day = new Date().toISOString().slice(0, 10);
      return { state: (await new Idempotency(Redis.fromEnv()).inspect(`daily-report:${day}`)).state };
    },
  },

  // docs/fencing.md: its import line, as the page's first step
  "fence-import": {},
  // docs/idempotency.md
  "idempotency-worker": {
    before() {
      const seen = { fulfilled: 0 };
      globalThis.fulfil = async () => seen.fulfilled++;
      // As a Worker has its settings: only in each request's env, nowhere at module scope.
      const workerEnv = { UPSTASH_REDIS_REST_URL: env.UPSTASH_REDIS_REST_URL, UPSTASH_REDIS_REST_TOKEN: env.UPSTASH_REDIS_REST_TOKEN };
      delete process.env.UPSTASH_REDIS_REST_URL;
      delete process.env.UPSTASH_REDIS_REST_TOKEN;
      return { seen, workerEnv };
    },
    async after({ workerEnv }, sample) {
      const delivery = unique("delivery");
      const deliver = (headers) =>
        sample.default.fetch(new Request("https://worker.test/hooks/github", { method: "POST", headers, body: '{"action":"opened"}' }), workerEnv);
      const answers = [];
      for (const headers of [{ "x-github-delivery": delivery }, { "x-github-delivery": delivery }, {}]) {
        const res = await deliver(headers);
        answers.push({ status: res.status, replayed: res.headers.get("idempotent-replayed"), body: await res.json() });
      }
      return { answers };
    },
  },
  "idempotency-client": {
    before() {
      const seen = { fulfilled: 0 };
      globalThis.fulfil = async () => seen.fulfilled++;
      return { seen };
    },
    async after(_ctx, sample) {
      const delivery = unique("delivery");
      const answers = [];
      for (let i = 0; i < 2; i++) {
        const res = await sample.POST(
          new Request("https://app.test/api/webhooks/github", { method: "POST", headers: { "x-github-delivery": delivery }, body: "{}" }),
        );
        answers.push({ status: res.status, replayed: res.headers.get("idempotent-replayed") });
      }
      return { answers, state: (await api(`/v1/idempotency/${delivery}`)).state };
    },
  },
  "idempotency-lambda": {
    before() {
      const seen = { processed: 0 };
      globalThis.processEvent = async () => seen.processed++;
      return { seen };
    },
    async after(_ctx, sample) {
      const id = unique("evt");
      const context = { getRemainingTimeInMillis: () => 20_000 };
      const answers = [];
      // Stripe's retry of the same event: pending_webhooks has changed, the fingerprinted fields have not.
      for (const pending of [2, 1]) {
        const body = JSON.stringify({ id, type: "invoice.paid", created: 1764000000, pending_webhooks: pending });
        const event = {
          version: "2.0",
          rawPath: "/hooks/stripe",
          rawQueryString: "",
          headers: { "content-type": "application/json", host: "lambda.test" },
          requestContext: { domainName: "lambda.test", http: { method: "POST", path: "/hooks/stripe" } },
          body,
          isBase64Encoded: false,
        };
        const result = await sample.handler(event, context);
        answers.push({ status: result.statusCode, replayed: result.headers?.["idempotent-replayed"] ?? null, body: JSON.parse(result.body) });
      }
      return { answers };
    },
  },
  "idempotency-hono": {
    before() {
      const seen = { credited: [] };
      globalThis.creditAccount = async (object) => seen.credited.push(object.invoice);
      return { seen };
    },
    async after(_ctx, sample) {
      const id = unique("evt");
      const answers = [];
      for (let i = 0; i < 2; i++) {
        const res = await sample.default.request(
          "/webhooks/payments",
          { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ id, data: { object: { invoice: "in_1" } } }) },
          { UPSTASH_REDIS_REST_URL: env.UPSTASH_REDIS_REST_URL, UPSTASH_REDIS_REST_TOKEN: env.UPSTASH_REDIS_REST_TOKEN },
        );
        answers.push({ status: res.status, replayed: res.headers.get("idempotent-replayed"), body: await res.json() });
      }
      return { id, answers };
    },
  },
  "idempotency-run-once": {
    before() {
      const seen = { runs: 0 };
      globalThis.buildReport = async (day, { fence }) => {
        seen.runs++;
        return { day, fence };
      };
      return { seen };
    },
    async after() {
      const day = new Date().toISOString().slice(0, 10);
      return { state: (await new Idempotency(Redis.fromEnv()).inspect(`daily-summary:${day}`)).state };
    },
  },
  "idempotency-node-http": {
    // A server serves until stopped: the driver stops it once this has seen what it does.
    stops: true,
    async before() {
      const seen = { fulfilled: 0 };
      globalThis.fulfil = async () => seen.fulfilled++;
      process.env.PORT = String(await freePort());
      return { seen };
    },
    async after() {
      const url = `http://127.0.0.1:${process.env.PORT}/hooks/github`;
      await until(
        () =>
          fetch(url).then(
            () => true,
            () => false,
          ),
        (up) => up,
      );
      const delivery = unique("delivery");
      const answers = [];
      for (const headers of [{ "x-github-delivery": delivery }, { "x-github-delivery": delivery }, {}]) {
        const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: '{"action":"opened"}' });
        answers.push({ status: res.status, replayed: res.headers.get("idempotent-replayed"), body: await res.json() });
      }
      return { answers };
    },
  },
};
