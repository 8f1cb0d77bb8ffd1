// A strict TypeScript consumer of the packed package, compiled with tsc
// (NodeNext) and run: takes and releases a mutex, uses every export's types.
import { Redis } from "@upstash/redis";
import {
  ConflictError,
  type IdempotencyState,
  InvalidInputError,
  LeaseLostError,
  LockedError,
  Mutex,
  type MutexGrant,
  RwLock,
  type RwGrant,
  runOnce,
  Semaphore,
  type SemaphoreGrant,
} from "holdfast";
import { HoldfastClient, type Lease, type LeaseHandle, LockedError as ClientLockedError } from "holdfast/client";
import { type ClaimOnGrant, FenceInputError, RedisFence, StaleFenceError } from "holdfast/fence";
import { fromHeader, idempotency, type IdempotencyMiddlewareOptions } from "holdfast/hono";

declare const process: { env: Record<string, string | undefined>; exitCode?: number };

const redis = new Redis({ url: process.env.UPSTASH_REDIS_REST_URL ?? "", token: process.env.UPSTASH_REDIS_REST_TOKEN ?? "", enableTelemetry: false });
const name = `ts-nodenext-${Date.now()}`;

const mutex = new Mutex(redis, name, { namespace: "consumer" });
const grant: MutexGrant = await mutex.withLock({ ttlMs: 5000, waitMs: 1000 }, async (g) => g);
const rw: RwGrant = await new RwLock(redis, name).withWriteLock({ ttlMs: 5000 }, async (g) => g);
const permits: SemaphoreGrant = await new Semaphore(redis, name, { limit: 3 }).withPermits({ ttlMs: 5000, permits: 2 }, async (g) => g);
const once: number = await runOnce(`${name}-job`, async () => 42, { redis, ttlMs: 5000 });
const errors = [LockedError, LeaseLostError, ConflictError, InvalidInputError].map((e) => e.name);
const options: IdempotencyMiddlewareOptions = { redis, ttlMs: 5000, key: fromHeader("idempotency-key") };
const middleware = idempotency(options);
const state: IdempotencyState | undefined = undefined;
const client = new HoldfastClient({ baseUrl: process.env.HOLDFAST_URL ?? "", apiKey: process.env.HOLDFAST_API_KEY ?? "" });
const lease: Lease = await client.lock(`${name}-client`, { ttlMs: 5000 });
const handle: LeaseHandle = lease.toJSON();
const busy = await client.lock(`${name}-client`, { ttlMs: 5000 }).catch((err: unknown) => err);
if (!(busy instanceof ClientLockedError)) throw new Error("a second client lock should be LockedError");
await (await client.resume(handle)).release();
lease.detach();
const fenced = new RedisFence(redis);
const claim: ClaimOnGrant = { store: fenced, resources: [`${name}-fenced`] };
const claimed: Lease = await client.lock(`${name}-claimed`, { ttlMs: 5000, claim });
const stale = await fenced.set(`${name}-fenced`, claimed.fence - 1, "older").catch((err: unknown) => err);
if (!(stale instanceof StaleFenceError) || stale.current !== claimed.fence) throw new Error("an older fence's write should be StaleFenceError");
const bad = await fenced.set("", 1, "v").catch((err: unknown) => err);
if (!(bad instanceof FenceInputError && bad.code === "invalid_resource")) throw new Error("an empty resource should be invalid_resource");
await claimed.release();

console.log(
  JSON.stringify({
    consumer: "ts-nodenext",
    fence: grant.fence,
    rw: rw.mode,
    permits: permits.permits,
    once,
    errors,
    middleware: typeof middleware,
    state,
    staleRefused: true,
  }),
);
