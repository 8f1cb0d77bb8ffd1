import type { Hono } from "hono";
import type { AppEnv } from "../../http/appTypes.js";
import type { Operations } from "../../http/openapiOps.js";
import type { ServiceContext } from "../../service/ServiceContext.js";
import { forceReleaseHolders } from "../holders/forceRelease.js";
import { idempotencyOperations } from "../idempotency/openapi.js";
import { idempotencyRoutes } from "../idempotency/routes.js";
import { inspectIdempotency } from "../idempotency/service.js";
import { mutexOperations } from "../mutex/openapi.js";
import { mutexRoutes } from "../mutex/routes.js";
import { forceReleaseMutex, inspectMutex } from "../mutex/service.js";
import { rwLockOperations } from "../rwlock/openapi.js";
import { rwLockRoutes } from "../rwlock/routes.js";
import { inspectRw } from "../rwlock/service.js";
import { semaphoreOperations } from "../semaphore/openapi.js";
import { semaphoreRoutes } from "../semaphore/routes.js";
import { inspectSemaphore } from "../semaphore/service.js";
import type { KindName } from "./ops.js";

/** What a force release asks (src/operator/schemas.ts): a label picks holders of a many-holder lock, a fence the mutex's lease. */
export interface ForceReleaseAsk {
  holder?: string;
  fence?: number;
}

/** What a kind brings to the HTTP API: where it is mounted, its routes, and their OpenAPI operations. */
export interface KindApi {
  kind: KindName;
  path: string;
  routes: Hono<AppEnv>;
  operations: Operations;
  /** Offered on a quorum of Redis databases (the others answer 501 there). */
  onQuorum: boolean;
  /** Its GET body (without the name), which a listing's items are too. */
  inspect(ctx: ServiceContext, name: string): Promise<Record<string, unknown>>;
  /** Whether a listing shows it: held, waited on, delayed or stored. */
  listed(state: Record<string, unknown>): boolean;
  /** An operator's force release (the kinds with holders); what it freed. */
  forceRelease?(ctx: ServiceContext, name: string, ask: ForceReleaseAsk): Promise<{ released: number; fence: number; holder: string | null }>;
}

const waited = (s: Record<string, unknown>) => Number(s.waiters) > 0;

/** The kind registry: every kind's HTTP API, in the order the OpenAPI document lists them. */
export const kindApis: KindApi[] = [
  {
    kind: "mutex",
    path: "/v1/locks",
    routes: mutexRoutes,
    operations: mutexOperations,
    onQuorum: true,
    inspect: async (ctx, name) => ({ ...(await inspectMutex(ctx, name)) }),
    listed: (s) => s.held === true || waited(s) || s.delayedUntil != null,
    forceRelease: (ctx, name, ask) => forceReleaseMutex(ctx, name, ask.fence),
  },
  {
    kind: "idempotency",
    path: "/v1/idempotency",
    routes: idempotencyRoutes,
    operations: idempotencyOperations,
    onQuorum: false,
    inspect: async (ctx, name) => ({ ...(await inspectIdempotency(ctx, name)) }),
    listed: (s) => s.state !== "absent",
  },
  {
    kind: "rwlock",
    path: "/v1/rwlocks",
    routes: rwLockRoutes,
    operations: rwLockOperations,
    onQuorum: false,
    inspect: async (ctx, name) => ({ ...(await inspectRw(ctx, name)) }),
    listed: (s) => s.mode !== "free" || waited(s),
    forceRelease: (ctx, name, ask) => forceReleaseHolders(ctx, "rwlock", name, ask.holder),
  },
  {
    kind: "semaphore",
    path: "/v1/semaphores",
    routes: semaphoreRoutes,
    operations: semaphoreOperations,
    onQuorum: false,
    inspect: async (ctx, name) => ({ ...(await inspectSemaphore(ctx, name)) }),
    listed: (s) => Number(s.holders) > 0 || waited(s),
    forceRelease: (ctx, name, ask) => forceReleaseHolders(ctx, "semaphore", name, ask.holder),
  },
];
