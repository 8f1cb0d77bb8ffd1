// The idempotent(handler) examples, run as a user who copied one out would run them: in a scratch
// project whose node_modules/holdfast is the package as built for users (test/support/builtPackage.ts),
// beside @upstash/redis and the senders' own libraries (stripe, @octokit/webhooks-methods), against
// the test stack's Redis. examples/nextjs-webhook's route file is loaded by Node 24 as it is (type
// stripping) and its exported POST called with each request, as Next.js calls it; examples/bun-server
// runs under Bun (the devDependency `bun`). Each test asserts what the example's README says a user sees.
import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { sign } from "@octokit/webhooks-methods";
import { Redis } from "@upstash/redis";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { installBuiltPackage } from "../support/builtPackage";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
const NODE24 = path.join(ROOT, "node_modules/node/bin/node");
const BUN = path.join(ROOT, "node_modules/.bin/bun");
const STRIPE_SECRET = "whsec_edge_examples_test";
const GITHUB_SECRET = "github-edge-examples-test";
const ROUTE = "app/api/webhooks/stripe/route.ts";

/**
 * What `next dev` does for a route file, in brief: each HTTP request to the route's path becomes a
 * `Request` given to the exported function of its method, whose `Response` is sent back.
 */
const ROUTE_SERVER = `
import http from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";
const file = process.argv[2];
const route = await import(pathToFileURL(path.resolve(file)).href);
const routePath = "/" + path.dirname(path.relative("app", file)).split(path.sep).join("/");
const server = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const url = new URL(req.url, "http://" + req.headers.host);
  const handler = url.pathname === routePath ? route[req.method] : undefined;
  const headers = Object.entries(req.headers).flatMap(([name, value]) => [value].flat().map((v) => [name, v]));
  const response = handler
    ? await handler(new Request(url, { method: req.method, headers, body: req.method === "GET" ? undefined : Buffer.concat(chunks) }))
    : new Response(null, { status: 404 });
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
});
server.listen(0, "127.0.0.1", () => console.log("Listening on http://127.0.0.1:" + server.address().port + "/"));
`;

interface Served {
  url: string;
  stop: () => Promise<void>;
}

/** Starts a server process and resolves once it prints "Listening on <url>" (fails at once if it exits first). */
function serve(bin: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Served> {
  const child = spawn(bin, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return new Promise<Served>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${path.basename(bin)} ${args.join(" ")} did not listen within 30 s:\n${output}`)), 30_000);
    const onOutput = (chunk: Buffer) => {
      output += chunk;
      const listening = /Listening on (\S+)/.exec(output);
      if (!listening) return;
      clearTimeout(timer);
      resolve({
        url: listening[1],
        stop: async () => {
          if (child.exitCode === null) child.kill("SIGTERM");
          await exited;
        },
      });
    };
    child.stdout.on("data", onOutput);
    child.stderr.on("data", onOutput);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${path.basename(bin)} ${args.join(" ")} exited ${code} before listening:\n${output}`));
    });
  });
}

let scratch: string;
let env: NodeJS.ProcessEnv;
const servers: Served[] = [];
const redis = () => new Redis({ url: inject("upstashUrl"), token: inject("upstashToken") });

interface Answer {
  status: number;
  replayed: string | null;
  body: Record<string, unknown>;
}

async function post(url: string, headers: Record<string, string>, body: string): Promise<Answer> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  return { status: res.status, replayed: res.headers.get("idempotent-replayed"), body: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "holdfast-edge-examples-"));
  await installBuiltPackage(scratch);
  // What each example's package.json brings besides holdfast and @upstash/redis.
  for (const dep of ["stripe", "@octokit/webhooks-methods", "@types/node"]) {
    fs.mkdirSync(path.dirname(path.join(scratch, "node_modules", dep)), { recursive: true });
    fs.symlinkSync(path.join(ROOT, "node_modules", dep), path.join(scratch, "node_modules", dep));
  }
  // As git has them: not what an install, a `next dev` or the reader's .env left there.
  const untracked = /^(node_modules|\.next|\.env.*|next-env\.d\.ts|tsconfig\.tsbuildinfo)$/;
  for (const app of ["nextjs-webhook", "bun-server"]) {
    fs.cpSync(path.join(ROOT, "examples", app), path.join(scratch, app), { recursive: true, filter: (src) => !untracked.test(path.basename(src)) });
  }
  fs.writeFileSync(path.join(scratch, "next-route-server.mjs"), ROUTE_SERVER);
  env = {
    ...process.env,
    NO_COLOR: "1",
    UPSTASH_REDIS_REST_URL: inject("upstashUrl"),
    UPSTASH_REDIS_REST_TOKEN: inject("upstashToken"),
    STRIPE_WEBHOOK_SECRET: STRIPE_SECRET,
    GITHUB_WEBHOOK_SECRET: GITHUB_SECRET,
  };
}, 120_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

describe("examples/nextjs-webhook", () => {
  let routeUrl: string;
  const handled = async (id: string) => Number((await redis().hget("nextjs-webhook:handled", id)) ?? 0);

  beforeAll(async () => {
    const served = await serve(NODE24, ["../next-route-server.mjs", ROUTE], path.join(scratch, "nextjs-webhook"), env);
    servers.push(served);
    routeUrl = new URL("api/webhooks/stripe", served.url).href;
  }, 60_000);

  /** A Stripe event as Stripe delivers it (docs.stripe.com/api/events/object). */
  const eventBody = (id: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      id,
      object: "event",
      api_version: "2025-10-29.clover",
      created: 1_767_225_600,
      type: "checkout.session.completed",
      livemode: false,
      pending_webhooks: 2,
      request: { id: null, idempotency_key: null },
      data: { object: { id: "cs_test_1", object: "checkout.session", amount_total: 2000, currency: "usd" } },
      ...extra,
    });
  /** The Stripe-Signature header, made by Stripe's own library (signed afresh for each attempt, as Stripe does). */
  const signed = (payload: string, secret = STRIPE_SECRET, timestamp?: number) => ({
    "stripe-signature": Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp }),
    "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
  });

  it("type-checks with its tsconfig.json against the package's and stripe's declarations", async () => {
    const checked = await run(process.execPath, [path.join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "nextjs-webhook"], { cwd: scratch }).then(
      () => "",
      (err: { stdout?: string }) => err.stdout ?? String(err),
    );
    expect(checked).toBe("");
  });

  it("POST handles a signed event once and replays its answer on the redelivery", async () => {
    const id = `evt_${crypto.randomUUID().replaceAll("-", "")}`;
    const body = eventBody(id);
    const first = await post(routeUrl, signed(body), body);
    const again = await post(routeUrl, signed(body), body);
    expect(first).toEqual({ status: 200, replayed: null, body: { received: true, event: id, type: "checkout.session.completed", handled: 1 } });
    expect(again).toEqual({ status: 200, replayed: "true", body: first.body });
    expect(await handled(id)).toBe(1);
  });

  it("a redelivery whose pending_webhooks changed is the same event (fingerprint: type and created), replayed", async () => {
    const id = `evt_${crypto.randomUUID().replaceAll("-", "")}`;
    const first = await post(routeUrl, signed(eventBody(id)), eventBody(id));
    const later = eventBody(id, { pending_webhooks: 1 });
    expect(await post(routeUrl, signed(later), later)).toEqual({ status: 200, replayed: "true", body: first.body });
    // Another event under the same id is no redelivery: 422, and not handled.
    const other = eventBody(id, { type: "invoice.paid" });
    expect(await post(routeUrl, signed(other), other)).toMatchObject({ status: 422, body: { error: "fingerprint_mismatch" } });
    expect(await handled(id)).toBe(1);
  });

  it("a forged, stale, tampered or missing signature is 400 and takes no key", async () => {
    const id = `evt_${crypto.randomUUID().replaceAll("-", "")}`;
    const body = eventBody(id);
    const refused = [
      await post(routeUrl, signed(body, "whsec_not_the_secret"), body),
      await post(routeUrl, signed(body, STRIPE_SECRET, Math.floor(Date.now() / 1000) - 3600), body),
      await post(routeUrl, signed(body), eventBody(id, { type: "invoice.paid" })),
      await post(routeUrl, {}, body),
    ];
    for (const answer of refused) expect(answer).toMatchObject({ status: 400, replayed: null, body: { error: "invalid_signature" } });
    expect(await handled(id)).toBe(0);
    // The refused deliveries took no key: the genuine one runs.
    expect(await post(routeUrl, signed(body), body)).toMatchObject({ status: 200, replayed: null, body: { handled: 1 } });
  });

  it("send-event.mjs (the README's test event) prints a first answer and its replay", async () => {
    const { stdout } = await run(NODE24, ["send-event.mjs", routeUrl], { cwd: path.join(scratch, "nextjs-webhook"), env, timeout: 30_000 });
    const [first, again] = stdout.trim().split("\n");
    expect(first).toMatch(/^200 replayed=no \{"received":true,"event":"evt_test_\d+","type":"checkout.session.completed","handled":1\}$/);
    expect(again).toBe(first?.replace("replayed=no", "replayed=true"));
  });
});

describe("examples/bun-server", () => {
  let hookUrl: string;
  const handled = async (id: string) => Number((await redis().hget("bun-server:handled", id)) ?? 0);

  beforeAll(async () => {
    const served = await serve(BUN, ["server.ts"], path.join(scratch, "bun-server"), { ...env, PORT: "0" });
    servers.push(served);
    hookUrl = new URL("webhooks/github", served.url).href;
  }, 60_000);

  /** A GitHub delivery's headers (docs.github.com, "Delivery headers"), signed by GitHub's own library. */
  const delivery = async (id: string, payload: string, secret = GITHUB_SECRET) => ({
    "user-agent": "GitHub-Hookshot/044aadd",
    "x-github-event": "issues",
    "x-github-delivery": id,
    "x-github-hook-id": "292430182",
    "x-hub-signature-256": await sign(secret, payload),
  });
  const payload = JSON.stringify({
    action: "opened",
    issue: { number: 7 },
    repository: { full_name: "octo-org/octo-repo" },
    sender: { login: "octocat" },
  });

  it("Bun.serve handles a signed delivery once and replays its answer on the redelivery", async () => {
    const id = crypto.randomUUID();
    const first = await post(hookUrl, await delivery(id, payload), payload);
    const again = await post(hookUrl, await delivery(id, payload), payload);
    expect(first).toEqual({
      status: 200,
      replayed: null,
      body: { received: true, event: "issues", action: "opened", repository: "octo-org/octo-repo", delivery: id, handled: 1 },
    });
    expect(again).toEqual({ status: 200, replayed: "true", body: first.body });
    expect(await handled(id)).toBe(1);
  });

  it("a forged or missing signature is 400 and takes no key; a signed request without X-GitHub-Delivery is 400 naming it", async () => {
    const id = crypto.randomUUID();
    const { "x-hub-signature-256": _, ...unsigned } = await delivery(id, payload);
    const refused = [await post(hookUrl, await delivery(id, payload, "not-the-secret"), payload), await post(hookUrl, unsigned, payload)];
    for (const answer of refused) expect(answer).toMatchObject({ status: 400, replayed: null, body: { error: "invalid_signature" } });
    const { "x-github-delivery": __, ...noDelivery } = await delivery(id, payload);
    const missing = await post(hookUrl, noDelivery, payload);
    expect(missing).toMatchObject({ status: 400, body: { error: "missing_idempotency_key" } });
    expect(String(missing.body.message)).toContain("X-GitHub-Delivery");
    expect(await handled(id)).toBe(0);
    expect(await post(hookUrl, await delivery(id, payload), payload)).toMatchObject({ status: 200, replayed: null, body: { handled: 1 } });
  });

  it("send-event.ts (the README's test delivery, run by bun) prints a first answer and its replay", async () => {
    const { stdout } = await run(BUN, ["send-event.ts", hookUrl], { cwd: path.join(scratch, "bun-server"), env, timeout: 30_000 });
    const [first, again] = stdout.trim().split("\n");
    expect(first).toMatch(/^200 replayed=no \{"received":true,"event":"issues","action":"opened",.*"handled":1\}$/);
    expect(again).toBe(first?.replace("replayed=no", "replayed=true"));
  });
});
