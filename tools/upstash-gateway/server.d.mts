// Types for server.mjs, so TypeScript (the fault suite) can import it without allowJs.
// Keep in sync with the JSDoc in server.mjs.

export interface Gateway {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** The local Upstash REST stand-in in front of redis-server on redisPort, with Bearer `token`. */
export function startGateway(options: { redisHost?: string; redisPort: number; token: string; port?: number }): Promise<Gateway>;
