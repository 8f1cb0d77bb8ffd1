// Types for resp-client.mjs, so TypeScript (the bench's market workload) can import it without allowJs.
// Keep in sync with the JSDoc in resp-client.mjs.

export class RedisReplyError extends Error {}
export class RedisConnectionError extends Error {}

/** Simple strings as string, bulk strings as Buffer, integers as number, nil as null, error replies as RedisReplyError. */
export type Reply = string | number | Buffer | null | RedisReplyError | Reply[];

/** One TCP connection to redis-server, pipelined: exec sends the commands back to back and answers their replies in order. */
export function createRespClient(options: { host?: string; port: number; onConnect?: Array<Array<string | Buffer>> }): {
  exec(commands: Array<Array<string | Buffer>>): Promise<Reply[]>;
  close(): void;
};
