import { checkStoredFence, describe } from "./check.js";
import { FenceInputError, StaleFenceError } from "./errors.js";

/**
 * What the SQL fence helpers share, Postgres (postgres.ts) and SQLite/D1
 * (sqlite.ts): statements with parameters, never a user value spliced into
 * SQL text, and no driver: the caller hands over a small function that runs
 * one statement (or, for SQLite, a batch) with their own client.
 */

/** A parameter value every driver here sends as is. A fence goes as its decimal text, cast in SQL (exact past 2^31 and 2^53 - 1 alike). */
export type SqlValue = string | number | boolean | null | Uint8Array;

/** One row of an answer, by column name. */
export type SqlRow = Record<string, unknown>;

/** One statement and its parameters ($1.. on Postgres, ?1.. on SQLite). */
export interface SqlStatement {
  sql: string;
  params: SqlValue[];
}

/**
 * Runs one statement and answers its rows: `(sql, params) => pool.query(sql, params).then((r) => r.rows)`
 * with node-postgres, Neon's Pool or PGlite; `sql.unsafe(sql, params)` with postgres.js.
 */
export type SqlQuery = (sql: string, params: SqlValue[]) => Promise<SqlRow[]>;

/** A table's or column's name: a plain SQL identifier, as Postgres allows it unquoted (at most 63 bytes). */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * A table or column name, checked and double-quoted (which both dialects
 * take, so a reserved word such as "order" works; Postgres then matches the
 * name's case exactly). "schema.table" is two identifiers. The check is what
 * makes quoting safe: no quote or other character can get through.
 */
export function sqlIdentifier(name: unknown, field: string, qualified = false): string {
  const parts = typeof name === "string" ? (qualified ? name.split(".") : [name]) : [];
  if (parts.length === 0 || parts.length > 2 || !parts.every((p) => IDENTIFIER.test(p))) {
    throw new FenceInputError(
      "invalid_resource",
      field,
      `${field} must be a plain SQL identifier (letters, digits and _, not starting with a digit, at most 63)${qualified ? ', or "schema.table"' : ""}, got ${describe(name)}`,
    );
  }
  return parts.map((p) => `"${p}"`).join(".");
}

/**
 * A value to bind, checked: what the drivers send as is (text, a finite
 * number, a boolean, NULL, bytes). Postgres text cannot hold U+0000, so the
 * Postgres helpers refuse it here rather than have the server fail mid-write.
 */
function checkSqlValue(value: unknown, field: string, noNul: boolean): SqlValue {
  if (value === null || typeof value === "boolean" || value instanceof Uint8Array) return value;
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value === "string") {
    if (noNul && value.includes("\u0000"))
      throw new FenceInputError("invalid_value", field, `${field} contains U+0000, which Postgres text cannot hold`);
    return value;
  }
  throw new FenceInputError(
    "invalid_value",
    field,
    `${field} must be text, a finite number, a boolean, null or bytes, got ${describe(value)}${typeof value === "bigint" ? " (pass it as decimal text)" : ""}`,
  );
}

/** A user statement for a fenced batch, checked like every other value before anything is sent. */
export function checkStatement(statement: unknown, field: string, noNul: boolean): SqlStatement {
  const s = statement as Partial<SqlStatement> | null;
  if (typeof s !== "object" || s === null || typeof s.sql !== "string" || s.sql.trim() === "" || !Array.isArray(s.params)) {
    throw new FenceInputError("invalid_value", field, `${field} must be { sql: non-empty text, params: an array }, got ${describe(statement)}`);
  }
  return { sql: s.sql, params: s.params.map((v, i) => checkSqlValue(v, `${field}.params[${i}]`, noNul)) };
}

/** How each dialect spells what the shared statements need. */
export interface SqlDialect {
  /** Postgres refuses U+0000 in text. */
  noNul: boolean;
  /** The n-th parameter, 1-based: $n or ?n. */
  param(n: number): string;
  /** The n-th parameter as a fence: its decimal text cast to the 64-bit integer type. */
  fenceParam(n: number): string;
  /** `column` holds a fence (an integer from 0) at most the fence in parameter n: false for NULL, a negative or (SQLite) a non-integer. */
  fenceAtMost(column: string, n: number): string;
  /** `column`'s fence as decimal text when it is an integer; NULL or something that is not a fence otherwise (never a lossy number). */
  fenceText(column: string): string;
}

/** The row a single-row resource is: its table, its key, and the fence column (`fence` unless named). */
export interface FencedRow {
  /** The table, "name" or "schema.name". */
  table: string;
  /** The row's key: column -> value, one or more columns (a NULL key matches no row, so it is refused). */
  key: Record<string, SqlValue>;
  /** The fence column's name; "fence" if left out. */
  fenceColumn?: string;
}

/** What a fenced update did: wrote the row, or found no row with that key. A stale fence is a StaleFenceError. */
export type FencedUpdateResult = { status: "updated" } | { status: "not_found" };

/** The checked, built statements of a fenced update: the guarded UPDATE and the read of the row's fence. */
export interface BuiltUpdate {
  /** How the row is named in errors: `table {"id":42}`. */
  resource: string;
  update: SqlStatement;
  read: SqlStatement;
}

/**
 * Builds `UPDATE t SET c = $.., fence = $f WHERE key = $.. AND fence BETWEEN 0 AND $f`
 * and `SELECT <fence as text> FROM t WHERE key = $..`. Every name is checked
 * and quoted, every value a parameter; the fence parameter is the fence's
 * decimal text. Throws FenceInputError before anything is sent.
 */
export function buildFencedUpdate(d: SqlDialect, row: FencedRow, fence: number, set: Record<string, SqlValue>): BuiltUpdate {
  if (typeof row !== "object" || row === null)
    throw new FenceInputError("invalid_resource", "row", `row must be { table, key }, got ${describe(row)}`);
  const table = sqlIdentifier(row.table, "table", true);
  const fenceColumn = sqlIdentifier(row.fenceColumn ?? "fence", "fenceColumn");
  const keys = columnsOf(row.key, "key", d.noNul);
  const sets = columnsOf(set, "set", d.noNul);
  if (keys.length === 0) throw new FenceInputError("invalid_value", "key", "key must name at least one column");
  for (const [column, value] of keys) {
    if (value === null) throw new FenceInputError("invalid_value", `key.${column}`, `key.${column} is null, which matches no row`);
  }
  if (sets.some(([column]) => `"${column}"` === fenceColumn)) {
    throw new FenceInputError(
      "invalid_value",
      `set.${row.fenceColumn ?? "fence"}`,
      "set must not name the fence column: the helper writes the fence",
    );
  }
  const fenceText = String(fence);
  // $1 is the fence; the key's values follow, then the set's.
  const keyParams = keys.map(([, v]) => v);
  const where = keys.map(([c], i) => `"${c}" = ${d.param(i + 2)}`).join(" AND ");
  const setList = sets.map(([c], i) => `"${c}" = ${d.param(i + 2 + keys.length)}`);
  setList.push(`${fenceColumn} = ${d.fenceParam(1)}`);
  return {
    resource: `${row.table} ${JSON.stringify(Object.fromEntries(keys))}`,
    update: {
      sql: `UPDATE ${table} SET ${setList.join(", ")} WHERE ${where} AND (${d.fenceAtMost(fenceColumn, 1)}) RETURNING 1 AS updated`,
      params: [fenceText, ...keyParams, ...sets.map(([, v]) => v)],
    },
    read: {
      sql: `SELECT ${d.fenceText(fenceColumn)} AS fence FROM ${table} WHERE ${keys.map(([c], i) => `"${c}" = ${d.param(i + 1)}`).join(" AND ")}`,
      params: keyParams,
    },
  };
}

function columnsOf(record: unknown, field: string, noNul: boolean): [string, SqlValue][] {
  if (typeof record !== "object" || record === null || Array.isArray(record) || record instanceof Uint8Array) {
    throw new FenceInputError("invalid_value", field, `${field} must be an object of column -> value, got ${describe(record)}`);
  }
  return Object.entries(record).map(([column, value]) => {
    sqlIdentifier(column, `${field} column`);
    return [column, checkSqlValue(value, `${field}.${column}`, noNul)];
  });
}

/**
 * A resource's fence as read after a guarded statement (rows of `fenceText`
 * AS fence): a higher fence throws StaleFenceError naming both, a corrupt one
 * FenceInputError corrupt_fence; otherwise "absent" (no row) or "not_higher"
 * (at most this fence: the guard took it, or would have, so after a refusal
 * the row changed between the two statements).
 */
export function judgeFence(rows: SqlRow[], resource: string, fence: number): "absent" | "not_higher" {
  if (rows.length === 0) return "absent";
  const current = checkStoredFence(rows[0].fence, resource);
  if (current > fence) throw new StaleFenceError(resource, fence, current);
  return "not_higher";
}
