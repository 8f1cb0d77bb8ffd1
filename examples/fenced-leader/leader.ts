// Kleppmann's scenario ("How to do distributed locking", 2016), run for real:
// leader A holds the lock and is paused (a GC pause, a frozen VM) past its
// lease; B is granted the lock and claims the table with its fence; A wakes,
// still believing it leads, and writes. A lock alone cannot stop that write:
// the database refuses it, because it has seen B's higher fence. Prints the
// timeline; exits 0 when A's late write was refused and the row holds B's.
import { PGlite } from "@electric-sql/pglite";
import { HoldfastClient, type Lease } from "holdfast/client";
import { PostgresFence, type SqlQuery, StaleFenceError } from "holdfast/fence";

const service = { baseUrl: process.env.HOLDFAST_URL ?? "http://localhost:8787", apiKey: process.env.HOLDFAST_API_KEY ?? "holdfast-local-dev-key" };
const LOCK = "fenced-leader-demo";
const RESOURCE = "leader_state"; // the fence's name for what the leader writes
const TTL_MS = 1500;

let started = Date.now();
const say = (line: string) => console.log(`${String(Date.now() - started).padStart(5)} ms  ${line}`);

// Postgres in this process (PGlite, Postgres compiled to WASM), so the demo runs anywhere;
// with a server it is the same SQL through your driver (README: pg, Neon).
const db = new PGlite();
const query: SqlQuery = async (sql, params) => (await db.query<Record<string, unknown>>(sql, params)).rows;
const fence = new PostgresFence({
  query,
  transaction: (work) => db.transaction((tx) => work(async (sql, params) => (await tx.query<Record<string, unknown>>(sql, params)).rows)),
});
await fence.createTable(); // holdfast_fences: the highest fence each resource has seen
await db.exec("CREATE TABLE IF NOT EXISTS leader_state (id int PRIMARY KEY, leader text NOT NULL, fence bigint NOT NULL)");

/** The leader's work: one fenced write, applied only if `lease.fence` is still the highest the table has seen. */
function writeState(leader: string, lease: Lease) {
  return fence.write(RESOURCE, lease.fence, (q) =>
    q(
      `INSERT INTO leader_state (id, leader, fence) VALUES (1, $1, $2::bigint)
       ON CONFLICT (id) DO UPDATE SET leader = excluded.leader, fence = excluded.fence`,
      [leader, String(lease.fence)],
    ),
  );
}

// Two processes in real life; two clients here. Both claim the table on every grant.
const claim = { store: fence, resources: [RESOURCE] };
const nodeA = new HoldfastClient(service);
const nodeB = new HoldfastClient(service);

started = Date.now(); // the timeline counts from here
const a = await nodeA.lock(LOCK, { ttlMs: TTL_MS, claim, holder: "leader A" });
say(`A: leader, fence ${a.fence}; claimed ${RESOURCE}`);
await writeState("A", a);
say(`A: wrote ${RESOURCE} = A`);
say(`A: checks its lease (held: ${!a.signal.aborted}), then is paused: no heartbeats, its lease ends in ${TTL_MS} ms`);
a.detach(); // what a stop-the-world pause does: the heartbeats stop, the lease is not released

say("B: waits for the lock");
const b = await nodeB.lock(LOCK, { ttlMs: 10_000, waitMs: 30_000, claim, holder: "leader B" });
say(`B: leader, fence ${b.fence}, after A's lease ran out; claimed ${RESOURCE}`);

say("A: wakes up, still believing it leads, and writes");
let refused = false;
try {
  await writeState("A", a);
  say(`A: late write ACCEPTED: ${RESOURCE} now holds A's stale state`);
} catch (err) {
  if (!(err instanceof StaleFenceError)) throw err;
  refused = true;
  say(`A: late write refused: StaleFenceError: ${err.message}`);
}

await writeState("B", b);
say(`B: wrote ${RESOURCE} = B`);
await b.release();

const [row] = (await db.query<{ leader: string; fence: string }>("SELECT leader, fence::text AS fence FROM leader_state WHERE id = 1")).rows;
say(`${RESOURCE}: leader ${row?.leader}, fence ${row?.fence}`);
await db.close();
process.exitCode = refused && row?.leader === "B" ? 0 : 1;
