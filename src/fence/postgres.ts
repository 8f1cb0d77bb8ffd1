import { checkFence, checkResource } from "./check.js";
import type { FenceClaimer } from "./types.js";
import {
  buildFencedUpdate,
  type FencedUpdate,
  type FencedUpdateResult,
  judgeFence,
  type SqlDialect,
  type SqlQuery,
  type SqlStatement,
  sqlIdentifier,
} from "./sql.js";

/**
 * Fences on Postgres (Neon, Supabase and Hyperdrive are the same SQL), over
 * the caller's own driver. Fences travel as decimal text cast to bigint and
 * come back as `fence::text`: drivers answer a bigint as a string, or (PGlite)
 * as a lossy number, so neither is ever read as a number.
 */
const postgres: SqlDialect = {
  noNul: true,
  param: (n) => `$${n}`,
  fenceParam: (n) => `$${n}::bigint`,
  // NULL BETWEEN .. is NULL: a NULL fence is refused like a negative one.
  fenceAtMost: (column, n) => `${column} BETWEEN 0 AND $${n}::bigint`,
  fenceText: (column) => `${column}::text`,
};

/**
 * A refused statement is told apart by reading the fence after it. Outside a
 * transaction that read is a new statement: the row may have changed between
 * (a first insert, a deletion), so a read that the guard would have passed
 * means "try again", a few times at most.
 */
const TRIES = 3;

/**
 * The fence column recipe, for a resource that is one row: `UPDATE t SET ...,
 * fence = $f WHERE id = $id AND fence BETWEEN 0 AND $f`, then, only when no
 * row was updated, a read of that row's fence to tell "no such row" (answered)
 * from "a higher fence wrote it" (StaleFenceError with the row's fence) and
 * from a corrupt fence (FenceInputError corrupt_fence: NULL, negative, past
 * 2^53 - 1). The read is a second statement, and may run outside any
 * transaction: a fence only goes up, so a fence read after the refusal is at
 * least the one that refused this write. The usual case is one round trip.
 */
export async function postgresFencedUpdate(query: SqlQuery, args: FencedUpdate, fence: number): Promise<FencedUpdateResult> {
  const f = checkFence(fence);
  const built = buildFencedUpdate(postgres, args, f);
  for (let i = 0; i < TRIES; i++) {
    if ((await run(query, built.update)).length > 0) return { status: "updated" };
    if (judgeFence(await run(query, built.read), built.resource, f) === "absent") return { status: "not_found" };
  }
  throw movedError(built.resource);
}

export interface PostgresFencesOptions {
  /** Runs one statement outside a transaction (claim, createTable). */
  query: SqlQuery;
  /**
   * Runs `work` in one transaction on one connection, committing when it
   * resolves and rolling back when it throws: with PGlite
   * `(work) => db.transaction((tx) => work((sql, params) => tx.query(sql, params).then((r) => r.rows)))`,
   * with postgres.js `sql.begin(...)`, with node-postgres BEGIN/COMMIT on a
   * client from the pool. Needed only by fencedWrite.
   */
  transaction?: <T>(work: (query: SqlQuery) => Promise<T>) => Promise<T>;
  /** The fences table, "holdfast_fences" unless named ("schema.table" allowed). */
  table?: string;
}

/**
 * The fences table, for a resource that is many rows (or not rows at all):
 * one row per resource name, holding the highest fence it has seen.
 */
export interface PostgresFences extends FenceClaimer {
  /** Creates the table if it is missing: run it once, at deploy or migration time. */
  createTable(): Promise<void>;
  /** Records that `fence` owns `resource` (an equal fence again is accepted); StaleFenceError, nothing recorded, if a higher one already did. */
  claim(resource: string, fence: number): Promise<void>;
  /**
   * Runs `work` (the caller's statements, through the query function it is
   * handed) in one transaction that first raises the resource's fence to
   * `fence`, and holds its row locked until the commit; StaleFenceError, and
   * `work` never runs, if a higher fence has been seen.
   */
  fencedWrite<T>(resource: string, fence: number, work: (query: SqlQuery) => Promise<T>): Promise<T>;
}

export function postgresFences(options: PostgresFencesOptions): PostgresFences {
  const table = sqlIdentifier(options.table ?? "holdfast_fences", "table", true);
  // One statement raises the fence and never lowers it. On a conflict Postgres
  // locks the existing row before it weighs the WHERE, and keeps the lock to
  // the end of the transaction even when the WHERE refuses: the SELECT ... FOR
  // UPDATE of this recipe, which also covers a resource that has no row yet
  // (two first writers meet on the primary key, and the second waits).
  const raise = (resource: string, f: number): SqlStatement => ({
    sql: `INSERT INTO ${table} AS held (resource, fence) VALUES ($1, ${postgres.fenceParam(2)})
      ON CONFLICT (resource) DO UPDATE SET fence = excluded.fence WHERE ${postgres.fenceAtMost("held.fence", 2)}
      RETURNING 1 AS raised`,
    params: [resource, String(f)],
  });
  const read = (resource: string): SqlStatement => ({
    sql: `SELECT ${postgres.fenceText("fence")} AS fence FROM ${table} WHERE resource = $1`,
    params: [resource],
  });

  return {
    async createTable() {
      await options.query(`CREATE TABLE IF NOT EXISTS ${table} (resource text PRIMARY KEY, fence bigint NOT NULL)`, []);
    },

    async claim(resource, fence) {
      const r = checkResource(resource);
      const f = checkFence(fence);
      for (let i = 0; i < TRIES; i++) {
        if ((await run(options.query, raise(r, f))).length > 0) return;
        judgeFence(await run(options.query, read(r)), r, f);
      }
      throw movedError(r);
    },

    async fencedWrite(resource, fence, work) {
      const r = checkResource(resource);
      const f = checkFence(fence);
      if (!options.transaction) throw new TypeError("postgresFences: fencedWrite needs the transaction option");
      return options.transaction(async (query) => {
        if ((await run(query, raise(r, f))).length === 0) {
          // The row is ours, locked by the refused upsert: this read is exact.
          judgeFence(await run(query, read(r)), r, f);
          throw movedError(r);
        }
        return work(query);
      });
    },
  };
}

function run(query: SqlQuery, s: SqlStatement) {
  return query(s.sql, s.params);
}

/** Only a write outside these helpers lowers a fence or deletes its row over and over. */
function movedError(resource: string): Error {
  return new Error(`the fence of ${JSON.stringify(resource)} kept changing under the fenced statement (lowered or deleted outside holdfast/fence?)`);
}
