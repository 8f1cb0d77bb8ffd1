// A plain Node ESM consumer of the packed package: takes and releases a lock
// of each kind against the Upstash REST URL and token in its environment.
import { execFileSync } from "node:child_process";
import { Redis } from "@upstash/redis";
import { LockedError, Mutex, RwLock, Semaphore } from "holdfast";
import { HoldfastClient } from "holdfast/client";
import { RedisFence, StaleFenceError } from "holdfast/fence";
import { idempotency } from "holdfast/hono";

const redis = new Redis({ url: process.env.UPSTASH_REDIS_REST_URL, token: process.env.UPSTASH_REDIS_REST_TOKEN, enableTelemetry: false });
const name = `node-esm-${Date.now()}`;

const mutex = new Mutex(redis, name);
const grant = await mutex.acquire({ ttlMs: 5000 });
const busy = await mutex.acquire({ ttlMs: 5000 }).catch((err) => err);
if (!(busy instanceof LockedError)) throw new Error(`a second acquire should be LockedError, got ${busy}`);
const released = await mutex.release(grant.token);

const rw = new RwLock(redis, name);
const reader = await rw.readLock({ ttlMs: 5000 });
await rw.release(reader.token);
const sem = new Semaphore(redis, name, { limit: 2 });
const permit = await sem.acquire({ ttlMs: 5000 });
await sem.release(permit.token);

// holdfast/fence: a fenced write goes through, an older fence's is refused.
const fenced = new RedisFence(redis);
await fenced.set(`${name}:fenced`, grant.fence + 1, "newer");
const stale = await fenced.set(`${name}:fenced`, grant.fence, "older").catch((err) => err);
if (!(stale instanceof StaleFenceError)) throw new Error(`an older fence's write should be StaleFenceError, got ${stale}`);

if (typeof idempotency !== "function") throw new Error("holdfast/hono has no idempotency middleware");

// The client and the bin, against the service (HOLDFAST_URL, HOLDFAST_API_KEY).
const client = new HoldfastClient({ baseUrl: process.env.HOLDFAST_URL, apiKey: process.env.HOLDFAST_API_KEY });
const fence = await client.withLock(name, { ttlMs: 5000 }, (lease) => lease.fence);
if (!(fence > 0)) throw new Error(`the client's lease has no fence: ${fence}`);
// The installed bin runs a command under the lock and passes its fence.
const printed = execFileSync(
  "npx",
  ["--no-install", "holdfast", "run", "--lock", name, "--", "node", "-e", "console.log(process.env.HOLDFAST_FENCE)"],
  {
    encoding: "utf8",
  },
);
if (!(Number(printed.trim()) > fence)) throw new Error(`holdfast run printed ${JSON.stringify(printed)}, not a fence above ${fence}`);
console.log(JSON.stringify({ consumer: "node-esm", fence: grant.fence, released: released.released, staleRefused: true }));
