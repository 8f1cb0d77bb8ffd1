// Types for stack.mjs, so TypeScript tests can import it without allowJs.
// Keep in sync with the JSDoc in stack.mjs, redis-server.mjs and ../upstash-gateway/server.mjs.

export interface RedisServer {
  port: number;
  /** pid of the current process (changes on restart) */
  readonly pid: number | undefined;
  stop(): Promise<void>;
  pause(): void;
  resume(): void;
  restart(): Promise<void>;
}

import type { Gateway, startGateway } from "../upstash-gateway/server.mjs";

export type { Gateway };

export interface LocalStack {
  redis: RedisServer;
  gateway: Gateway;
  /** UPSTASH_REDIS_REST_URL */
  url: string;
  /** UPSTASH_REDIS_REST_TOKEN */
  token: string;
  stop(): Promise<void>;
}

export function startLocalStack(options?: {
  token?: string;
  gateway?: Omit<Parameters<typeof startGateway>[0], "redisHost" | "redisPort" | "token" | "port">;
}): Promise<LocalStack>;

export function startStackControl(): Promise<{ url: string; close(): Promise<void> }>;
