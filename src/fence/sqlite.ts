import { checkFence, checkResource, describe } from "./check.js";
import { FenceInputError } from "./errors.js";
import type { FenceClaimer } from "./types.js";
import {
  buildFencedUpdate,
  checkStatement,
  type FencedRow,
  type FencedUpdateResult,
  judgeFence,
  type SqlDialect,
  type SqlRow,
  type SqlStatement,
  type SqlValue,
  sqlIdentifier,
} from "./sql.js";

/**
 * Fences on SQLite and Cloudflare D1. D1 has no interactive transaction and
 * SQLite no SELECT ... FOR UPDATE; what both have is a batch of statements
 * run as one transaction (D1's `batch()`, rolled back whole when one
 * statement fails; SQLite serialises writers, so nothing runs between its
 * statements). Every helper here is one batch: the fence check is a statement
 * in it, and the answer is read in the same batch.
 */
const sqlite: SqlDialect = {
  noNul: false,
  param: (n) => `?${n}`,
  fenceParam: (n) => `CAST(?${n} AS INTEGER)`,
  // SQLite stores any type in any column: only an integer is a fence (a REAL 1.5 or the text '7' is not).
  fenceAtMost: (column, n) => `typeof(${column}) = 'integer' AND ${column} BETWEEN 0 AND CAST(?${n} AS INTEGER)`,
  // D1 answers integers as JavaScript numbers (lossy past 2^53): text is exact. Not an integer: its type and value, never a fence.
  fenceText: (column) =>
    `CASE typeof(${column}) WHEN 'integer' THEN CAST(${column} AS TEXT) WHEN 'null' THEN NULL ELSE typeof(${column}) || ' ' || quote(${column}) END`,
};

/**
 * Runs the statements in order as one transaction (all or nothing; the first
 * failure rejects) and answers each one's rows. `d1Batch(env.DB)` for D1;
 * with node:sqlite or better-sqlite3, the statements inside BEGIN IMMEDIATE /
 * COMMIT.
 */
export type SqliteBatch = (statements: SqlStatement[]) => Promise<SqlRow[][]>;

/** The parts of a D1 database these helpers use (a `D1Database` binding has them): no dependency on its types. */
export interface D1Like {
  prepare(sql: string): D1StatementLike;
  batch(statements: D1StatementLike[]): Promise<{ results?: unknown[] }[]>;
}
export interface D1StatementLike {
  bind(...values: unknown[]): D1StatementLike;
}

/** A D1 database as a SqliteBatch: D1's batch() is a transaction, rolled back whole if a statement fails. */
export function d1Batch(db: D1Like): SqliteBatch {
  return async (statements) => {
    const results = await db.batch(statements.map((s) => db.prepare(s.sql).bind(...s.params)));
    return results.map((r) => (r.results ?? []) as SqlRow[]);
  };
}

export interface SqliteFenceOptions {
  batch: SqliteBatch;
  /** The fences table, "holdfast_fences" unless named. */
  table?: string;
}

/**
 * Fenced writes on SQLite and D1, two recipes, each one batch:
 *
 * - the fences table, for a resource that is many rows (or no rows): one row
 *   per resource name holding the highest fence it has seen (claim, write);
 * - the fence column, for a resource that is one row: the row carries its own
 *   fence (updateRow; the table option plays no part).
 */
export class SqliteFence implements FenceClaimer {
  readonly #batch: SqliteBatch;
  readonly #table: string;

  constructor(options: SqliteFenceOptions) {
    this.#batch = options.batch;
    this.#table = sqlIdentifier(options.table ?? "holdfast_fences", "table", true);
  }

  /** Creates the fences table if it is missing: run it once (a D1 migration may hold the same statement). */
  async createTable(): Promise<void> {
    await this.#batch([{ sql: `CREATE TABLE IF NOT EXISTS ${this.#table} (resource TEXT PRIMARY KEY, fence INTEGER NOT NULL)`, params: [] }]);
  }

  /** Records that `fence` owns `resource` (an equal fence again is accepted); StaleFenceError, nothing recorded, if a higher one already did. */
  async claim(resource: string, fence: number): Promise<void> {
    const r = checkResource(resource);
    const f = checkFence(fence);
    const [, rows] = await this.#batch([this.#upsert(r, f, "leave"), this.#read(r)]);
    // Read in the same transaction: this fence if the claim took (judged "not_higher"), a higher or corrupt one if not (thrown).
    if (judgeFence(rows, r, f) === "absent") throw inconsistent(r);
  }

  /**
   * Runs `statements` in one batch behind a statement that raises the
   * resource's fence to `fence`, and fails, rolling the batch back, when a
   * higher fence has been seen (StaleFenceError, nothing written). Answers
   * each statement's rows. A statement of the caller's that fails rolls back
   * the fence too, and its error is the one thrown.
   */
  async write(resource: string, fence: number, statements: SqlStatement[]): Promise<SqlRow[][]> {
    const r = checkResource(resource);
    const f = checkFence(fence);
    if (!Array.isArray(statements)) {
      throw new FenceInputError("invalid_value", "statements", `statements must be an array of { sql, params }, got ${describe(statements)}`);
    }
    const checked = statements.map((s, i) => checkStatement(s, `statements[${i}]`, false));
    try {
      return (await this.#batch([this.#upsert(r, f, "fail"), ...checked])).slice(1);
    } catch (failed) {
      // Which statement failed is not told the same way by every driver: the
      // fence read after the rollback is. A fence only goes up, so a higher
      // one now means the guard refused (or would have); otherwise it was
      // one of the caller's statements, and its error is thrown.
      judgeFence(await this.#batch([this.#read(r)]).then((rs) => rs[0]), r, f);
      throw failed;
    }
  }

  /**
   * The fence column recipe as one batch: the guarded `UPDATE t SET ...,
   * fence = ?f WHERE id = ?id AND fence BETWEEN 0 AND ?f`, then the row's
   * fence read in the same transaction. Updated, the row answers a row from
   * its RETURNING; if not, the read tells a higher fence (StaleFenceError
   * with it), a corrupt one (FenceInputError corrupt_fence) and no row
   * (answered not_found). One round trip.
   */
  async updateRow(row: FencedRow, fence: number, set: Record<string, SqlValue>): Promise<FencedUpdateResult> {
    const f = checkFence(fence);
    const built = buildFencedUpdate(sqlite, row, f, set);
    const [updated, read] = await this.#batch([built.update, built.read]);
    if (updated.length > 0) return { status: "updated" };
    if (judgeFence(read, built.resource, f) === "absent") return { status: "not_found" };
    throw inconsistent(built.resource);
  }

  /**
   * Raises the fence, never lowers it. A refusal either leaves the row as it
   * is (claim: the read in the same batch tells) or sets NULL, which the
   * table's NOT NULL refuses, so the statement fails and the whole batch
   * rolls back (write: SQLite has no way for a statement to raise an error
   * outside a trigger; the constraint is how one refuses conditionally).
   */
  #upsert(resource: string, f: number, refused: "leave" | "fail"): SqlStatement {
    const t = this.#table;
    const holds = `typeof(${t}.fence) = 'integer' AND ${t}.fence BETWEEN 0 AND excluded.fence`;
    const update =
      refused === "leave" ? `SET fence = excluded.fence WHERE ${holds}` : `SET fence = CASE WHEN ${holds} THEN excluded.fence ELSE NULL END`;
    return {
      sql: `INSERT INTO ${t} (resource, fence) VALUES (?1, ${sqlite.fenceParam(2)}) ON CONFLICT (resource) DO UPDATE ${update}`,
      params: [resource, String(f)],
    };
  }

  #read(resource: string): SqlStatement {
    return { sql: `SELECT ${sqlite.fenceText("fence")} AS fence FROM ${this.#table} WHERE resource = ?1`, params: [resource] };
  }
}

/** Within one transaction the read cannot disagree with the guarded statement before it, unless the batch is not one transaction. */
function inconsistent(resource: string): Error {
  return new Error(
    `the fence of ${JSON.stringify(resource)} read in the same batch disagrees with the guarded statement: is the batch one transaction?`,
  );
}
