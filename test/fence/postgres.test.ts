// holdfast/fence on Postgres: the fence column recipe and the fences table against a real
// Postgres (PGlite, the WASM build of the server), through the same tiny query function a
// user hands over. Every statement goes through `query`, so a test can count what was sent.
import { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FenceInputError, StaleFenceError } from "../../src/fence/errors";
import { PostgresFence } from "../../src/fence/postgres";
import type { SqlQuery, SqlValue } from "../../src/fence/sql";

const MAX = Number.MAX_SAFE_INTEGER; // 2^53 - 1, the highest fence

let db: PGlite;
let sent = 0;
/** The user's query function over PGlite (or over a transaction of it), counting what it sends. */
const counted =
  (on: Pick<PGlite, "query">): SqlQuery =>
  async (sql, params) => {
    sent++;
    return (await on.query<Record<string, unknown>>(sql, params)).rows;
  };
const query: SqlQuery = (sql, params) => counted(db)(sql, params);
const fences = () => new PostgresFence({ query, transaction: (work) => db.transaction((tx) => work(counted(tx))) });

/** What the database holds, read behind the helpers' backs (not counted). */
async function rows(sql: string, params: SqlValue[] = []) {
  return (await db.query<Record<string, unknown>>(sql, params)).rows;
}
async function storedFence(resource: string) {
  return (await rows("SELECT fence::text AS fence FROM holdfast_fences WHERE resource = $1", [resource]))[0]?.fence;
}

/** The error `p` rejects with (failing the test if it resolves). */
async function refusal(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    (v) => expect.fail(`expected a refusal, got ${JSON.stringify(v)}`),
    (e) => e,
  );
}

beforeAll(async () => {
  db = new PGlite();
  await fences().createTable();
  await db.exec(`
    CREATE TABLE ledger (resource text NOT NULL, entry text NOT NULL);
    CREATE TABLE accounts (id text PRIMARY KEY, owner text, balance integer, fence bigint);
  `);
});
afterAll(() => db.close());
beforeEach(async () => {
  await db.exec("TRUNCATE holdfast_fences, ledger, accounts");
  sent = 0;
});

const writeEntry = (resource: string, entry: string) => (q: SqlQuery) => q("INSERT INTO ledger (resource, entry) VALUES ($1, $2)", [resource, entry]);

describe("fences table (PostgresFence claim, write)", () => {
  it("a claim refuses an older holder's write: StaleFenceError names both fences, its statements never run, nothing written", async () => {
    const f = fences();
    await f.claim("orders", 7);
    let ran = false;
    const err = await refusal(
      f.write("orders", 5, async (q) => {
        ran = true;
        return writeEntry("orders", "old")(q);
      }),
    );
    expect(err).toBeInstanceOf(StaleFenceError);
    expect(err).toMatchObject({ code: "stale_fence", resource: "orders", fence: 5, current: 7 });
    expect(ran).toBe(false);
    expect(await rows("SELECT * FROM ledger")).toEqual([]);
    expect(await storedFence("orders")).toBe("7");
    // A stale claim is refused the same way.
    expect(await refusal(f.claim("orders", 6))).toMatchObject({ code: "stale_fence", fence: 6, current: 7 });
  });

  it("an equal fence is allowed (a retry, or the holder that claimed), and a first write records its fence", async () => {
    const f = fences();
    await f.claim("orders", 7);
    await f.claim("orders", 7);
    await f.write("orders", 7, writeEntry("orders", "a"));
    await f.write("fresh", 3, writeEntry("fresh", "b"));
    expect(await rows("SELECT resource, entry FROM ledger ORDER BY entry")).toEqual([
      { resource: "orders", entry: "a" },
      { resource: "fresh", entry: "b" },
    ]);
    expect(await storedFence("fresh")).toBe("3");
  });

  it("answers what the statements answer, and a statement that fails rolls the fence back with it", async () => {
    const f = fences();
    expect(await f.write("orders", 4, (q) => q("SELECT 41 + 1 AS n", []))).toEqual([{ n: 42 }]);
    await expect(f.write("orders", 9, (q) => q("INSERT INTO ledger (resource) VALUES ($1)", ["orders"]))).rejects.toThrow(/null value/);
    expect(await storedFence("orders")).toBe("4");
  });

  it("two writers with fences a < b: only b's write survives, whichever runs first", async () => {
    for (const order of [
      [1, 2],
      [2, 1],
    ]) {
      await db.exec("TRUNCATE holdfast_fences, ledger");
      const f = fences();
      const write = (fence: number) =>
        f.write("report", fence, (q) => q("DELETE FROM ledger", []).then(() => writeEntry("report", `by ${fence}`)(q)));
      // Started together: the first to reach the row locks it; the other waits for its commit.
      const settled = await Promise.allSettled(order.map(write));
      expect(await rows("SELECT entry FROM ledger")).toEqual([{ entry: "by 2" }]);
      expect(await storedFence("report")).toBe("2");
      const refused = settled.filter((s) => s.status === "rejected");
      // b first: a is refused. a first: a wrote, and b overwrote it.
      expect(refused.length).toBe(order[0] === 2 ? 1 : 0);
    }
  });

  it("fences up to 2^53 - 1 round-trip exactly (bigint read as text, never as a number)", async () => {
    const f = fences();
    await f.claim("big", MAX);
    expect(await storedFence("big")).toBe("9007199254740991");
    expect(await refusal(f.write("big", MAX - 1, writeEntry("big", "x")))).toMatchObject({ fence: MAX - 1, current: MAX });
    await f.write("big", MAX, writeEntry("big", "x"));
  });

  it("reads the fence exactly whatever the driver makes of a bigint (here a BigInt, as postgres.js can)", async () => {
    const INT8 = 20;
    const bigints: SqlQuery = async (sql, params) => (await db.query<Record<string, unknown>>(sql, params, { parsers: { [INT8]: BigInt } })).rows;
    expect((await bigints("SELECT 7::bigint AS n", []))[0].n).toBe(7n);
    const f = new PostgresFence({ query: bigints });
    await f.claim("big", MAX);
    expect(await refusal(f.claim("big", MAX - 1))).toMatchObject({ fence: MAX - 1, current: MAX });
  });

  it("a corrupt stored fence is refused, not overwritten: negative, or past 2^53 - 1", async () => {
    const f = fences();
    await db.query("INSERT INTO holdfast_fences VALUES ('neg', -1), ('huge', 9007199254740993)");
    for (const [resource, stored] of [
      ["neg", "-1"],
      ["huge", "9007199254740993"],
    ]) {
      for (const attempt of [f.claim(resource, 5), f.write(resource, 5, writeEntry(resource, "x"))]) {
        const err = await refusal(attempt);
        expect(err).toBeInstanceOf(FenceInputError);
        expect(err).toMatchObject({ code: "corrupt_fence", field: "resource" });
      }
      expect(await storedFence(resource)).toBe(stored);
    }
    expect(await rows("SELECT * FROM ledger")).toEqual([]);
  });

  it("bad input is refused before anything is sent", async () => {
    const f = fences();
    const cases: [() => Promise<unknown>, string, string][] = [
      [() => f.claim("r", -1), "invalid_fence", "fence"],
      [() => f.claim("r", 1.5), "invalid_fence", "fence"],
      [() => f.claim("r", 2 ** 53), "invalid_fence", "fence"],
      [() => f.claim("r", Number.NaN), "invalid_fence", "fence"],
      [() => f.write("r", "7.0" as unknown as number, writeEntry("r", "x")), "invalid_fence", "fence"],
      [() => f.claim("", 1), "invalid_resource", "resource"],
      [() => f.write("r".repeat(201), 1, writeEntry("r", "x")), "invalid_resource", "resource"],
    ];
    for (const [attempt, code, field] of cases) {
      const err = await refusal(attempt());
      expect(err).toBeInstanceOf(FenceInputError);
      expect(err).toMatchObject({ code, field });
    }
    expect(() => new PostgresFence({ query, table: 'fences"; DROP TABLE ledger; --' })).toThrow(FenceInputError);
    expect(sent).toBe(0);
  });
});

describe("fence column recipe (PostgresFence.updateRow)", () => {
  const update = (fence: number, set: Record<string, SqlValue> = { balance: fence * 10 }, id = "acct-1") =>
    new PostgresFence({ query }).updateRow({ table: "accounts", key: { id } }, fence, set);
  const account = async () => (await rows("SELECT owner, balance, fence::text AS fence FROM accounts WHERE id = 'acct-1'"))[0];

  it("writes the row and its fence when the fence is at least the row's, equal included", async () => {
    await rows("INSERT INTO accounts VALUES ('acct-1', 'ann', 0, 3)");
    expect(await update(3, { balance: 30, owner: "bob" })).toEqual({ status: "updated" });
    expect(await account()).toEqual({ owner: "bob", balance: 30, fence: "3" });
    expect(await update(8)).toEqual({ status: "updated" });
    expect(await account()).toEqual({ owner: "bob", balance: 80, fence: "8" });
    expect(sent).toBe(2); // one statement per write that goes through
  });

  it("an older fence is refused with the row's fence named, and nothing written", async () => {
    await rows("INSERT INTO accounts VALUES ('acct-1', 'ann', 70, 7)");
    const err = await refusal(update(5));
    expect(err).toBeInstanceOf(StaleFenceError);
    expect(err).toMatchObject({ resource: 'accounts {"id":"acct-1"}', fence: 5, current: 7 });
    expect(await account()).toEqual({ owner: "ann", balance: 70, fence: "7" });
  });

  it("no such row is answered not_found, told apart from stale", async () => {
    await rows("INSERT INTO accounts VALUES ('acct-1', 'ann', 70, 7)");
    expect(await update(9, undefined, "acct-2")).toEqual({ status: "not_found" });
    expect(await rows("SELECT id FROM accounts")).toEqual([{ id: "acct-1" }]);
  });

  it("two writers with fences a < b: only b's write survives, whichever statement runs first", async () => {
    for (const order of [
      [1, 2],
      [2, 1],
    ]) {
      await db.exec("TRUNCATE accounts; INSERT INTO accounts VALUES ('acct-1', 'ann', 0, 0)");
      await Promise.allSettled(order.map((fence) => update(fence)));
      expect(await account()).toEqual({ owner: "ann", balance: 20, fence: "2" });
    }
  });

  it("a row created between the refused update and its read is written on a second try, not called stale or missing", async () => {
    // Another client inserts the row just after this update found none (its statement, run from the query function).
    let inserted = false;
    const racing: SqlQuery = async (sql, params) => {
      const answer = await query(sql, params);
      if (!inserted && sql.startsWith("UPDATE")) {
        inserted = true;
        await rows("INSERT INTO accounts VALUES ('acct-1', 'ann', 0, 1)");
      }
      return answer;
    };
    expect(await new PostgresFence({ query: racing }).updateRow({ table: "accounts", key: { id: "acct-1" } }, 4, { balance: 5 })).toEqual({
      status: "updated",
    });
    expect(await account()).toEqual({ owner: "ann", balance: 5, fence: "4" });
    expect(sent).toBe(3); // update, read, update
  });

  it("2^53 - 1 round-trips; a corrupt fence (NULL, negative, past 2^53 - 1) is refused, the row left as it was", async () => {
    await rows("INSERT INTO accounts VALUES ('acct-1', 'ann', 0, 0)");
    await update(MAX, { balance: 1 });
    expect(await refusal(update(MAX - 1, { balance: 2 }))).toMatchObject({ fence: MAX - 1, current: MAX });
    for (const stored of [null, "-4", "9007199254740992"]) {
      await rows("UPDATE accounts SET fence = $1::bigint, balance = 0", [stored]);
      const err = await refusal(update(5));
      expect(err).toBeInstanceOf(FenceInputError);
      expect(err).toMatchObject({ code: "corrupt_fence" });
      expect(await account()).toEqual({ owner: "ann", balance: 0, fence: stored });
    }
  });

  it("bad input is refused before anything is sent: names that are not plain identifiers, values a column cannot hold", async () => {
    // args: what to change in the row ({ table, key, fenceColumn }) or the set ({ set }).
    const attempt = ({ set = { balance: 1 }, ...row }: { set?: object } & object, fence = 1) =>
      refusal(new PostgresFence({ query }).updateRow({ table: "accounts", key: { id: "a" }, ...row }, fence, set as Record<string, SqlValue>));
    const cases: [object, string, string][] = [
      [{ table: "accounts; DROP TABLE ledger" }, "invalid_resource", "table"],
      [{ table: 'a"b' }, "invalid_resource", "table"],
      [{ table: "a.b.c" }, "invalid_resource", "table"],
      [{ table: "x".repeat(64) }, "invalid_resource", "table"],
      [{ fenceColumn: "fence = 0 --" }, "invalid_resource", "fenceColumn"],
      [{ set: { "balance = 0, owner": 1 } }, "invalid_resource", "set column"],
      [{ key: { "id OR 1=1": "a" } }, "invalid_resource", "key column"],
      [{ set: { fence: 9 } }, "invalid_value", "set.fence"],
      [{ key: {} }, "invalid_value", "key"],
      [{ key: { id: null } }, "invalid_value", "key.id"],
      [{ set: { owner: undefined } }, "invalid_value", "set.owner"],
      [{ set: { balance: Number.NaN } }, "invalid_value", "set.balance"],
      [{ set: { balance: 10n } }, "invalid_value", "set.balance"],
      [{ set: { owner: { name: "x" } } }, "invalid_value", "set.owner"],
      [{ set: { owner: "a\u0000b" } }, "invalid_value", "set.owner"],
    ];
    for (const [args, code, field] of cases) {
      const err = await attempt(args);
      expect(
        err,
        JSON.stringify(args, (_, v) => (typeof v === "bigint" ? `${v}n` : v)),
      ).toBeInstanceOf(FenceInputError);
      expect(err).toMatchObject({ code, field });
    }
    expect(await attempt({}, -1)).toMatchObject({ code: "invalid_fence" });
    expect(await attempt({}, 2 ** 53)).toMatchObject({ code: "invalid_fence" });
    expect(sent).toBe(0);
  });
});
