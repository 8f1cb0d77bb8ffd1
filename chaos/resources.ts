/**
 * The resources the lock guards, for real, through holdfast/fence: a Redis
 * list on its own redis-server (not one the faults touch, so a FLUSHALL of the
 * lock's Redis leaves it alone), guarded by RedisFence, and a Postgres table
 * (PGlite, in this process) guarded by PostgresFence. Every grant claims both
 * before its holder gets it (claim on grant), and every write goes to both.
 *
 * What each accepted is read back from the resource itself, in the order it
 * applied them (the list's order; the table's serial), and what it refused is
 * each StaleFenceError it answered: the checker judges the resources, not the
 * suite's bookkeeping.
 */
import { PGlite } from "@electric-sql/pglite";
import { Redis } from "@upstash/redis";
import { type ClaimOnGrant, PostgresFence, RedisFence, StaleFenceError } from "../src/fence/index";
import type { SqlQuery } from "../src/fence/sql";
import type { Write } from "./fencedResource";

const RESOURCE_KINDS = ["redis", "postgres"] as const;
type ResourceKind = (typeof RESOURCE_KINDS)[number];

/** Appends one entry to the list (KEYS[1]), run by RedisFence only while the fence holds. */
const APPEND = "return redis.call('RPUSH', KEYS[1], ARGV[1])";

export interface Resources {
  /** The claim-on-grant option for one run's resource (the lock's name). */
  claimFor(resource: string): ClaimOnGrant;
  /** A holder's write to both resources; answers once both have answered. */
  write(resource: string, client: number, fence: number, at: number): Promise<void>;
  /** Every write each resource accepted (in its order) or refused, for the checker. */
  log(resource: string): Promise<Write[]>;
  close(): Promise<void>;
}

/** `node`: the Upstash REST endpoint of a Redis no fault touches. */
export async function startResources(node: { url: string; token: string }): Promise<Resources> {
  const redis = new RedisFence(new Redis({ url: node.url, token: node.token, retry: { retries: 2, backoff: (n) => 25 * 2 ** n } }));
  const db = new PGlite();
  const query: SqlQuery = async (sql, params) => (await db.query<Record<string, unknown>>(sql, params)).rows;
  const postgres = new PostgresFence({
    query,
    transaction: (work) => db.transaction((tx) => work(async (sql, params) => (await tx.query<Record<string, unknown>>(sql, params)).rows)),
  });
  await postgres.createTable();
  await db.exec(
    "CREATE TABLE chaos_writes (seq bigserial PRIMARY KEY, resource text NOT NULL, client integer NOT NULL, fence bigint NOT NULL, at double precision NOT NULL)",
  );

  // Both resources under one claimer: a grant is handed over only once each has heard of its fence.
  const both = { claim: (resource: string, fence: number) => Promise.all([redis.claim(resource, fence), postgres.claim(resource, fence)]) };
  // Writes the resources refused, and ones that failed otherwise (the resource's own store is never faulted).
  const refused = new Map<string, Write[]>();
  const refuse = (key: string, w: Write) => refused.set(key, [...(refused.get(key) ?? []), w]);
  const attempt = async (kind: ResourceKind, resource: string, w: Write, write: () => Promise<unknown>) => {
    try {
      await write();
    } catch (err) {
      if (!(err instanceof StaleFenceError)) throw err;
      refuse(`${kind} ${resource}`, { ...w, resource: kind, accepted: false });
    }
  };

  return {
    claimFor: (resource) => ({ store: both, resources: [resource] }),
    async write(resource, client, fence, at) {
      const w: Write = { client, fence, at, accepted: true };
      await Promise.all([
        attempt("redis", resource, w, () => redis.eval(resource, fence, APPEND, [resource], [JSON.stringify([client, fence, at])])),
        attempt("postgres", resource, w, () =>
          postgres.write(resource, fence, (q) =>
            q("INSERT INTO chaos_writes (resource, client, fence, at) VALUES ($1, $2, $3::bigint, $4)", [resource, client, String(fence), at]),
          ),
        ),
      ]);
    },
    async log(resource) {
      const listed = (await redis.redis.eval("return redis.call('LRANGE', KEYS[1], 0, -1)", [resource], [])) as unknown[];
      const fromRedis = listed.map((e) => {
        const [client, fence, at] = typeof e === "string" ? JSON.parse(e) : (e as number[]);
        return { client, fence, at, accepted: true, resource: "redis" };
      });
      const rows = await query("SELECT client, fence::text AS fence, at FROM chaos_writes WHERE resource = $1 ORDER BY seq", [resource]);
      const fromPostgres = rows.map((r) => ({
        client: Number(r.client),
        fence: Number(r.fence),
        at: Number(r.at),
        accepted: true,
        resource: "postgres",
      }));
      return [...fromRedis, ...fromPostgres, ...RESOURCE_KINDS.flatMap((k) => refused.get(`${k} ${resource}`) ?? [])];
    },
    close: () => db.close(),
  };
}
