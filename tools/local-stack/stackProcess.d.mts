// Types for stackProcess.mjs, so the test setup (TypeScript) can import it without allowJs.

/** redis-server and the Upstash gateway in a child process: url and token are UPSTASH_REDIS_REST_URL and _TOKEN. */
export function startLocalStackProcess(): Promise<{ url: string; token: string; stop: () => Promise<void> }>;
