// holdfast/fence on SQLite: the fence column recipe and the fences table against a real D1
// database inside workerd (the FENCE_DB binding, vitest.config.ts), through d1Batch, the
// adapter a Worker hands over. Every batch goes through `batch`, so a test can count what was sent.
import { env } from "cloudflare:test";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FenceInputError, StaleFenceError } from "../../src/fence/errors";
import type { SqlStatement, SqlValue } from "../../src/fence/sql";
import { d1Batch, type SqliteBatch, SqliteFence } from "../../src/fence/sqlite";

const MAX = Number.MAX_SAFE_INTEGER; // 2^53 - 1, the highest fence
const db = env.FENCE_DB;

let sent = 0;
const d1 = d1Batch(db);
const batch: SqliteBatch = (statements) => {
  sent++;
  return d1(statements);
};
const fences = () => new SqliteFence({ batch });

/** What the database holds, read behind the helpers' backs (not counted). */
async function rows(sql: string, ...params: SqlValue[]) {
  return (
    await db
      .prepare(sql)
      .bind(...params)
      .all<Record<string, unknown>>()
  ).results;
}
async function storedFence(resource: string) {
  return (await rows("SELECT CAST(fence AS TEXT) AS fence FROM holdfast_fences WHERE resource = ?1", resource))[0]?.fence;
}

/** The error `p` rejects with (failing the test if it resolves). */
async function refusal(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    (v) => expect.fail(`expected a refusal, got ${JSON.stringify(v)}`),
    (e) => e,
  );
}

beforeAll(async () => {
  await fences().createTable();
  await db.batch([
    db.prepare("CREATE TABLE IF NOT EXISTS ledger (resource TEXT NOT NULL, entry TEXT NOT NULL)"),
    db.prepare("CREATE TABLE IF NOT EXISTS accounts (id TEXT PRIMARY KEY, owner TEXT, balance INTEGER, fence INTEGER)"),
  ]);
});
beforeEach(async () => {
  await db.batch([db.prepare("DELETE FROM holdfast_fences"), db.prepare("DELETE FROM ledger"), db.prepare("DELETE FROM accounts")]);
  sent = 0;
});

const entry = (resource: string, text: string): SqlStatement => ({
  sql: "INSERT INTO ledger (resource, entry) VALUES (?1, ?2)",
  params: [resource, text],
});

describe("fences table on D1 (SqliteFence claim, write)", () => {
  it("a claim refuses an older holder's write: StaleFenceError names both fences, the batch rolled back, nothing written", async () => {
    const f = fences();
    await f.claim("orders", 7);
    const err = await refusal(f.write("orders", 5, [entry("orders", "old")]));
    expect(err).toBeInstanceOf(StaleFenceError);
    expect(err).toMatchObject({ code: "stale_fence", resource: "orders", fence: 5, current: 7 });
    expect(await rows("SELECT * FROM ledger")).toEqual([]);
    expect(await storedFence("orders")).toBe("7");
    expect(await refusal(f.claim("orders", 6))).toMatchObject({ code: "stale_fence", fence: 6, current: 7 });
    expect(await storedFence("orders")).toBe("7");
  });

  it("an equal fence is allowed, a first write records its fence, and each statement's rows are answered", async () => {
    const f = fences();
    await f.claim("orders", 7);
    await f.claim("orders", 7);
    expect(await f.write("orders", 7, [entry("orders", "a"), { sql: "SELECT count(*) AS n FROM ledger", params: [] }])).toEqual([[], [{ n: 1 }]]);
    await f.write("fresh", 3, [entry("fresh", "b")]);
    expect(await rows("SELECT resource, entry FROM ledger ORDER BY entry")).toEqual([
      { resource: "orders", entry: "a" },
      { resource: "fresh", entry: "b" },
    ]);
    expect(await storedFence("fresh")).toBe("3");
    expect(sent).toBe(4);
  });

  it("a statement of the caller's that fails rolls the fence back with it, and its own error is thrown", async () => {
    const f = fences();
    await f.claim("orders", 4);
    const err = await refusal(f.write("orders", 9, [entry("orders", "a"), { sql: "INSERT INTO ledger (resource) VALUES (?1)", params: ["orders"] }]));
    expect(String(err)).toMatch(/NOT NULL constraint failed: ledger\.entry/);
    expect(await storedFence("orders")).toBe("4");
    expect(await rows("SELECT * FROM ledger")).toEqual([]);
  });

  it("two writers with fences a < b: only b's write survives, whichever runs first", async () => {
    for (const order of [
      [1, 2],
      [2, 1],
    ]) {
      await db.batch([db.prepare("DELETE FROM holdfast_fences"), db.prepare("DELETE FROM ledger")]);
      const f = fences();
      const write = (fence: number) => f.write("report", fence, [{ sql: "DELETE FROM ledger", params: [] }, entry("report", `by ${fence}`)]);
      const settled = await Promise.allSettled(order.map(write));
      expect(await rows("SELECT entry FROM ledger")).toEqual([{ entry: "by 2" }]);
      expect(await storedFence("report")).toBe("2");
      // b first: a is refused. a first: a wrote, and b overwrote it.
      expect(settled.filter((s) => s.status === "rejected").length).toBe(order[0] === 2 ? 1 : 0);
    }
  });

  it("fences up to 2^53 - 1 round-trip exactly", async () => {
    const f = fences();
    await f.claim("big", MAX);
    expect(await storedFence("big")).toBe("9007199254740991");
    expect(await refusal(f.write("big", MAX - 1, [entry("big", "x")]))).toMatchObject({ fence: MAX - 1, current: MAX });
    await f.write("big", MAX, [entry("big", "x")]);
    expect(await rows("SELECT entry FROM ledger")).toEqual([{ entry: "x" }]);
  });

  it("a corrupt stored fence is refused, not overwritten: negative, past 2^53 - 1, a fraction, text", async () => {
    const f = fences();
    await db.prepare("INSERT INTO holdfast_fences VALUES ('neg', -1), ('huge', 9007199254740993), ('half', 1.5), ('word', 'seven')").run();
    for (const [resource, stored] of [
      ["neg", "-1"],
      ["huge", "9007199254740993"],
      ["half", "1.5"],
      ["word", "seven"],
    ]) {
      for (const attempt of [() => f.claim(resource, 5), () => f.write(resource, 5, [entry(resource, "x")])]) {
        const err = await refusal(attempt());
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
      [() => f.claim("r", 2 ** 53), "invalid_fence", "fence"],
      [() => f.write("r", 0.5, [entry("r", "x")]), "invalid_fence", "fence"],
      [() => f.claim("", 1), "invalid_resource", "resource"],
      [() => f.write("r".repeat(201), 1, [entry("r", "x")]), "invalid_resource", "resource"],
      [() => f.write("r", 1, entry("r", "x") as unknown as SqlStatement[]), "invalid_value", "statements"],
      [() => f.write("r", 1, [{ sql: "", params: [] }]), "invalid_value", "statements[0]"],
      [
        () => f.write("r", 1, [entry("r", "x"), { sql: "SELECT ?1", params: [undefined as unknown as SqlValue] }]),
        "invalid_value",
        "statements[1].params[0]",
      ],
    ];
    for (const [attempt, code, field] of cases) {
      const err = await refusal(attempt());
      expect(err).toBeInstanceOf(FenceInputError);
      expect(err).toMatchObject({ code, field });
    }
    expect(() => new SqliteFence({ batch, table: "holdfast_fences WHERE 1" })).toThrow(FenceInputError);
    expect(sent).toBe(0);
  });
});

describe("fence column recipe on D1 (SqliteFence.updateRow)", () => {
  const update = (fence: number, set: Record<string, SqlValue> = { balance: fence * 10 }, id = "acct-1") =>
    new SqliteFence({ batch }).updateRow({ table: "accounts", key: { id } }, fence, set);
  const account = async () => (await rows("SELECT owner, balance, CAST(fence AS TEXT) AS fence FROM accounts WHERE id = 'acct-1'"))[0];

  it("writes the row and its fence when the fence is at least the row's, equal included, in one batch", async () => {
    await rows("INSERT INTO accounts VALUES ('acct-1', 'ann', 0, 3)");
    expect(await update(3, { balance: 30, owner: "bob" })).toEqual({ status: "updated" });
    expect(await account()).toEqual({ owner: "bob", balance: 30, fence: "3" });
    expect(await update(8)).toEqual({ status: "updated" });
    expect(await account()).toEqual({ owner: "bob", balance: 80, fence: "8" });
    expect(sent).toBe(2);
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

  it("two writers with fences a < b: only b's write survives, whichever runs first", async () => {
    for (const order of [
      [1, 2],
      [2, 1],
    ]) {
      await db.batch([db.prepare("DELETE FROM accounts"), db.prepare("INSERT INTO accounts VALUES ('acct-1', 'ann', 0, 0)")]);
      await Promise.allSettled(order.map((fence) => update(fence)));
      expect(await account()).toEqual({ owner: "ann", balance: 20, fence: "2" });
    }
  });

  it("2^53 - 1 round-trips; a corrupt fence (NULL, negative, past 2^53 - 1, a fraction, text) is refused, the row left as it was", async () => {
    await rows("INSERT INTO accounts VALUES ('acct-1', 'ann', 0, 0)");
    await update(MAX, { balance: 1 });
    expect(await refusal(update(MAX - 1, { balance: 2 }))).toMatchObject({ fence: MAX - 1, current: MAX });
    for (const [planted, shown] of [
      ["NULL", null],
      ["-4", "-4"],
      ["9007199254740992", "9007199254740992"],
      ["2.5", "2.5"],
      ["'3'", "3"], // text in an INTEGER column becomes the integer 3: a fence after all, at most 5
    ]) {
      await rows(`UPDATE accounts SET fence = ${planted}, balance = 0`);
      if (shown === "3") {
        expect(await update(5, { balance: 9 })).toEqual({ status: "updated" });
        continue;
      }
      const err = await refusal(update(5));
      expect(err).toBeInstanceOf(FenceInputError);
      expect(err).toMatchObject({ code: "corrupt_fence" });
      expect(await account()).toEqual({ owner: "ann", balance: 0, fence: shown });
    }
  });

  it("in a column of no type, where SQLite keeps text as text, a text fence is corrupt, not read as a number", async () => {
    await rows("CREATE TABLE IF NOT EXISTS loose (id TEXT PRIMARY KEY, note TEXT, fence)");
    await rows("DELETE FROM loose");
    await rows("INSERT INTO loose VALUES ('k', 'kept', '3')");
    const err = await refusal(new SqliteFence({ batch }).updateRow({ table: "loose", key: { id: "k" } }, 5, { note: "new" }));
    expect(err).toMatchObject({ code: "corrupt_fence" });
    expect(await rows("SELECT note, fence, typeof(fence) AS type FROM loose")).toEqual([{ note: "kept", fence: "3", type: "text" }]);
    // Repaired to an integer, it takes the write, and the fence written is an integer too (sent as text, cast in SQL).
    await rows("UPDATE loose SET fence = 3");
    expect(await new SqliteFence({ batch }).updateRow({ table: "loose", key: { id: "k" } }, 5, { note: "new" })).toEqual({ status: "updated" });
    expect(await rows("SELECT note, fence, typeof(fence) AS type FROM loose")).toEqual([{ note: "new", fence: 5, type: "integer" }]);
  });

  it("bad input is refused before anything is sent", async () => {
    // args: what to change in the row ({ table, key, fenceColumn }) or the set ({ set }).
    const attempt = ({ set = { balance: 1 }, ...row }: { set?: object } & object, fence = 1) =>
      refusal(new SqliteFence({ batch }).updateRow({ table: "accounts", key: { id: "a" }, ...row }, fence, set as Record<string, SqlValue>));
    const cases: [object, string, string][] = [
      [{ table: "accounts; DROP TABLE ledger" }, "invalid_resource", "table"],
      [{ fenceColumn: "fence`" }, "invalid_resource", "fenceColumn"],
      [{ set: { "balance = 0, owner": 1 } }, "invalid_resource", "set column"],
      [{ set: { fence: 9 } }, "invalid_value", "set.fence"],
      [{ key: { id: null } }, "invalid_value", "key.id"],
      [{ set: { owner: undefined } }, "invalid_value", "set.owner"],
      [{ set: { balance: Number.POSITIVE_INFINITY } }, "invalid_value", "set.balance"],
    ];
    for (const [args, code, field] of cases) {
      const err = await attempt(args);
      expect(err, JSON.stringify(args)).toBeInstanceOf(FenceInputError);
      expect(err).toMatchObject({ code, field });
    }
    expect(await attempt({}, -1)).toMatchObject({ code: "invalid_fence" });
    expect(sent).toBe(0);
  });
});
