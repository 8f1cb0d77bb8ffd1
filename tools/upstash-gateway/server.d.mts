// Types for server.mjs, so TypeScript (the fault suite, the bench, tests) can import it without allowJs.
// Keep in sync with the JSDoc in server.mjs.

export interface ScriptStats {
  runs: number;
  keyRuleRefusals: number;
  spanningSlots: number;
}

export interface Gateway {
  url: string;
  port: number;
  close(): Promise<void>;
  /** allow-key-locking scripts run, by the digest of the text the client sent. */
  scriptStats(): Map<string, ScriptStats>;
}

export const UPSTASH_MAX_REQUEST_BYTES: number;

/** The local Upstash REST stand-in in front of redis-server on redisPort, with Bearer `token`. */
export function startGateway(options: {
  redisHost?: string;
  redisPort: number;
  token: string;
  port?: number;
  scripts?: "upstash" | "verbatim";
  keyRule?: "enforce" | "off";
  maxRequestBytes?: number;
  requestLimit?: number;
}): Promise<Gateway>;
