import type { Hono } from "hono";
import type { AppEnv } from "../../http/appTypes.js";
import type { Operations } from "../../http/openapiOps.js";
import { idempotencyOperations } from "../idempotency/openapi.js";
import { idempotencyRoutes } from "../idempotency/routes.js";
import { mutexOperations } from "../mutex/openapi.js";
import { mutexRoutes } from "../mutex/routes.js";
import { rwLockOperations } from "../rwlock/openapi.js";
import { rwLockRoutes } from "../rwlock/routes.js";
import { semaphoreOperations } from "../semaphore/openapi.js";
import { semaphoreRoutes } from "../semaphore/routes.js";

/** What a kind brings to the HTTP API: where it is mounted, its routes, and their OpenAPI operations. */
export interface KindApi {
  path: string;
  routes: Hono<AppEnv>;
  operations: Operations;
  /** Offered on a quorum of Redis databases (the others answer 501 there). */
  onQuorum: boolean;
}

/** The kind registry: every kind's HTTP API, in the order the OpenAPI document lists them. */
export const kindApis: KindApi[] = [
  { path: "/v1/locks", routes: mutexRoutes, operations: mutexOperations, onQuorum: true },
  { path: "/v1/idempotency", routes: idempotencyRoutes, operations: idempotencyOperations, onQuorum: false },
  { path: "/v1/rwlocks", routes: rwLockRoutes, operations: rwLockOperations, onQuorum: false },
  { path: "/v1/semaphores", routes: semaphoreRoutes, operations: semaphoreOperations, onQuorum: false },
];
