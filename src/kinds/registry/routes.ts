import type { KindApi } from "../../http/kindApi.js";
import { forceReleaseHolders } from "../../holders/forceRelease.js";
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

const waited = (s: Record<string, unknown>) => Number(s.waiters) > 0;

export type { ForceReleaseAsk, KindApi } from "../../http/kindApi.js";

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
