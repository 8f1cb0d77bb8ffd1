// Types for redis-server.mjs, so TypeScript (the fault suite) can import it without allowJs.
// Keep in sync with the JSDoc in redis-server.mjs.
import type { RedisServer } from "./stack.mjs";

/** Absolute path of redis-server; installs it with apt-get when missing and running as root. */
export function findOrInstallRedisServer(): string;

export function startRedisServer(options?: { port?: number }): Promise<RedisServer>;
