import { checkFence, checkResource } from "./check.js";
import type { FenceClaimer } from "./types.js";
import {
  buildFencedUpdate,
  type FencedRow,
  type FencedUpdateResult,
  judgeFence,
  type SqlDialect,
  type SqlQuery,
  type SqlStatement,
  type SqlValue,
  sqlIdentifier,
} from "./sql.js";

/**
 * Fences on Postgres (Neon, Supabase and Hyperdrive are the same SQL), over
 * the caller's own driver. Fences travel as decimal text cast to bigint and
 * come back as `fence::text`: drivers answer a bigint as a string, a BigInt or
 * (PGlite) a number that is lossy past 2^53, so none of those is ever read.
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

export interface PostgresFenceOptions {
  /** Runs one statement outside a transaction (claim, updateRow, createTable). */
  query: SqlQuery;
  /**
   * Runs `work` in one transaction on one connection, committing when it
   * resolves and rolling back when it throws: with PGlite
   * `(work) => db.transaction((tx) => work((sql, params) => tx.query(sql, params).then((r) => r.rows)))`,
   * with postgres.js `sql.begin(...)`, with node-postgres BEGIN/COMMIT on a
   * client from the pool. Needed only by write().
   */
  transaction?: <T>(work: (query: SqlQuery) => Promise<T>) => Promise<T>;
  /** The fences table, "holdfast_fences" unless named ("schema.table" allowed). */
  table?: string;
}

/**
 * Fenced writes on Postgres, two recipes:
 *
 * - the fences table, for a resource that is many rows (or no rows): one row
 *   per resource name holding the highest fence it has seen (claim, write);
 * - the fence column, for a resource that is one row: the row carries its own
 *   fence (updateRow; the table option plays no part).
 */
export class PostgresFence implements FenceClaimer {
  readonly #query: SqlQuery;
  readonly #transaction: PostgresFenceOptions["transaction"];
  readonly #table: string;

  constructor(options: PostgresFenceOptions) {
    this.#query = options.query;
    this.#transaction = options.transaction;
    this.#table = sqlIdentifier(options.table ?? "holdfast_fences", "table", true);
  }

  /** Creates the fences table if it is missing: run it once, at deploy or migration time. */
  async createTable(): Promise<void> {
    await this.#query(`CREATE TABLE IF NOT EXISTS ${this.#table} (resource text PRIMARY KEY, fence bigint NOT NULL)`, []);
  }

  /** Records that `fence` owns `resource` (an equal fence again is accepted); StaleFenceError, nothing recorded, if a higher one already did. */
  async claim(resource: string, fence: number): Promise<void> {
    const r = checkResource(resource);
    const f = checkFence(fence);
    for (let i = 0; i < TRIES; i++) {
      if ((await run(this.#query, this.#raise(r, f))).length > 0) return;
      judgeFence(await run(this.#query, this.#read(r)), r, f);
    }
    throw movedError(r);
  }

  /**
   * Runs `work` (the caller's statements, through the query function it is
   * handed) in one transaction that first raises the resource's fence to
   * `fence` and holds its row locked until the commit; StaleFenceError, and
   * `work` never runs, if a higher fence has been seen. Answers what `work`
   * answers; if it throws, its writes and the fence roll back.
   */
  async write<T>(resource: string, fence: number, work: (query: SqlQuery) => Promise<T>): Promise<T> {
    const r = checkResource(resource);
    const f = checkFence(fence);
    if (!this.#transaction) throw new TypeError("PostgresFence: write() needs the transaction option");
    return this.#transaction(async (query) => {
      if ((await run(query, this.#raise(r, f))).length === 0) {
        // The row is ours, locked by the refused upsert: this read is exact.
        judgeFence(await run(query, this.#read(r)), r, f);
        throw movedError(r);
      }
      return work(query);
    });
  }

  /**
   * The fence column recipe: `UPDATE t SET ..., fence = $f WHERE id = $id AND
   * fence BETWEEN 0 AND $f`, then, only when no row was updated, a read of
   * that row's fence to tell "no such row" (answered not_found) from "a
   * higher fence wrote it" (StaleFenceError with the row's fence) and from a
   * corrupt fence (FenceInputError corrupt_fence: NULL, negative, past 2^53 -
   * 1). The read is a second statement, outside any transaction: a fence only
   * goes up, so a fence read after the refusal is at least the one that
   * refused this write. A write that goes through is one round trip.
   */
  async updateRow(row: FencedRow, fence: number, set: Record<string, SqlValue>): Promise<FencedUpdateResult> {
    const f = checkFence(fence);
    const built = buildFencedUpdate(postgres, row, f, set);
    for (let i = 0; i < TRIES; i++) {
      if ((await run(this.#query, built.update)).length > 0) return { status: "updated" };
      if (judgeFence(await run(this.#query, built.read), built.resource, f) === "absent") return { status: "not_found" };
    }
    throw movedError(built.resource);
  }

  // One statement raises the fence and never lowers it. On a conflict Postgres
  // locks the existing row before it weighs the WHERE, and keeps the lock to
  // the end of the transaction even when the WHERE refuses: the SELECT ... FOR
  // UPDATE of this recipe, which also covers a resource that has no row yet
  // (two first writers meet on the primary key, and the second waits).
  #raise(resource: string, f: number): SqlStatement {
    return {
      sql: `INSERT INTO ${this.#table} AS held (resource, fence) VALUES ($1, ${postgres.fenceParam(2)})
        ON CONFLICT (resource) DO UPDATE SET fence = excluded.fence WHERE ${postgres.fenceAtMost("held.fence", 2)}
        RETURNING 1 AS raised`,
      params: [resource, String(f)],
    };
  }

  #read(resource: string): SqlStatement {
    return { sql: `SELECT ${postgres.fenceText("fence")} AS fence FROM ${this.#table} WHERE resource = $1`, params: [resource] };
  }
}

function run(query: SqlQuery, s: SqlStatement) {
  return query(s.sql, s.params);
}

/** Only a write outside these helpers lowers a fence or deletes its row over and over. */
function movedError(resource: string): Error {
  return new Error(`the fence of ${JSON.stringify(resource)} kept changing under the fenced statement (lowered or deleted outside holdfast/fence?)`);
}
