/**
 * npm run chaos: the fault suite. For each fault and each store it applies
 * to, four clients take one lock over and over and write to the resources it
 * guards (a Redis list and a Postgres table behind holdfast/fence, each grant
 * claiming both first: resources.ts) while the fault is injected for real and
 * then healed; a checker reads the history and what the resources accepted
 * and refused, prints a table per fault, and checks what we promise:
 * - under every fault: 0 stale writes accepted and 0 accepted out of fence
 *   order at either resource, and fences that never go backwards or repeat
 *   (data loss included);
 * - without data loss: 0 overlapping holds (by the store's own expiresAt, or
 *   by the clients' view where a store clock that went back cannot tell);
 * - the fault's own promises (a quorum with one database down: no 503...).
 * Then the flow row (flowRow.ts): 32 clients on one flow limit (concurrency 4,
 * 20 starts a second), 30 s on each store under the faults above that keep
 * its data and clock, checked for windows over the rate, callers over the
 * concurrency at a resource that counts them, and fences out of order.
 * Then the election row (electionRow.ts): 8 campaigners and 3 observers on
 * one election, 30 s on each store elections run on under the same faults,
 * checked for two leaders at a fenced resource, terms going back, and
 * observers that skip, disagree or fall behind.
 * Last, the flood rows (flood.ts): a wait socket flood in one namespace,
 * and another namespace's acquires held to the bare object's floor under the
 * same flood (flood.ts says how).
 * Exits 1 when one does not hold. Results also go to chaos/results/.
 *
 * --quick (`npm run chaos:quick`, run by .ci/run): every fault once, on one
 * target each (Fault.quick: spread so each store and client meets several),
 * with shorter windows before and after (settings.ts) and some faults
 * shorter, then the flow row and the election row once per fault marked
 * flow.quick (a few seconds each), then the flood rows with their own quick windows (flood.ts,
 * QUICK_TIMINGS); the same promises, checked the same way. About two minutes
 * with the lab's start on two cores. Results go to chaos/results/quick.md
 * and quick.json (latest.* stay the full run's).
 * --only=<part of a fault's name> runs only the faults that match (with
 * --quick too); the flow row, the election row and the flood rows run when
 * it is part of their name (--only=flow, --only=election, --only=flood), and
 * --floods=ten,churn runs only those of their floods (one, ten, hundred, churn).
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { check, promisesBroken, type Report } from "./checker";
import { ELECTION_ROW, runElectionRows } from "./electionRow";
import { FencedResource } from "./fencedResource";
import { FLOOD_ROWS, type FloodTimings, FULL_TIMINGS, QUICK_TIMINGS, runFloodRows } from "./flood";
import { FAULTS, type FaultRun } from "./faults";
import { FLOW_ROW, runFlowRows } from "./flowRow";
import { History } from "./history";
import { checkDeliveries, type IdempotencyReport, runDeliveries } from "./idempotencyWorkload";
import { startLab, type TargetName } from "./lab";
import { AFTER_MS, BEFORE_MS, CLIENTS, HOLD_MS, QUICK_AFTER_MS, QUICK_BEFORE_MS, TTL_MS, WAIT_MS, WRITES_PER_HOLD } from "./settings";
import { now, sleep } from "./time";
import { runClients, runDisconnectingWaiters, runVanishingSocketWaiters, socketWaitersVerdict } from "./workload";

interface Row {
  fault: string;
  target: TargetName;
  dataLoss: boolean;
  report: Report;
  /** The webhook deliveries on the same store (none on the quorum). */
  deliveries?: IdempotencyReport;
  notes: string[];
  failures: string[];
}

const only = process.argv.find((a) => a.startsWith("--only="))?.slice("--only=".length);
const quick = process.argv.includes("--quick");
/** --floods=ten,churn: only these of the flood rows' floods (flood.ts FLOODS: one, ten, hundred, churn). */
const onlyFloods = process.argv
  .find((a) => a.startsWith("--floods="))
  ?.slice("--floods=".length)
  .split(",") as FloodTimings["floods"] | undefined;
const beforeMs = quick ? QUICK_BEFORE_MS : BEFORE_MS;
const afterMs = quick ? QUICK_AFTER_MS : AFTER_MS;

async function main() {
  const started = Date.now();
  console.log(
    `holdfast fault suite${quick ? " (quick: every fault once, on one target each)" : ""}: ${CLIENTS} clients per run, TTL ${TTL_MS} ms, holds of ${HOLD_MS} ms with ${WRITES_PER_HOLD} fenced writes and a heartbeat, waits up to ${WAIT_MS} ms, ${beforeMs} ms before each fault and ${afterMs} ms after`,
  );
  console.log(
    "starting three redis-servers (append-only, fsync always, clock shim), their gateways and the Worker on both stores, and the guarded resources (a fourth redis-server, PGlite)...",
  );
  const lab = await startLab();
  console.log(`the lab is up (${seconds(Date.now() - started)} s)`);
  const rows: Row[] = [];
  let floods = { runs: 0, broken: 0 };
  let flows = { runs: 0, broken: 0 };
  let elections = { runs: 0, broken: 0 };
  try {
    for (const fault of FAULTS) {
      if (only && !fault.name.includes(only)) continue;
      const lastsMs = quick ? (fault.quick.lastsMs ?? fault.lastsMs) : fault.lastsMs;
      const shortened = quick && lastsMs !== fault.lastsMs ? `, quick: the fault ${lastsMs} ms` : "";
      console.log(`\n## ${fault.name}${fault.dataLoss ? " (data loss)" : ""}${shortened}\n`);
      const faultStarted = Date.now();
      const faultRows: Row[] = [];
      for (const target of quick ? [fault.quick.target] : fault.targets) {
        await lab.heal();
        const lockName = `chaos-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
        const history = new History();
        const run: FaultRun = { lab, pausing: false, disconnecting: false, notes: [], failures: [], history, window: { from: 0, to: 0 } };
        const unclaimed = new FencedResource();
        const client = lab.client(target);
        let pausedUntil = 0;
        const startAt = now();
        const endAt = startAt + beforeMs + lastsMs + afterMs;
        const done = () => now() >= endAt;
        const workload = runClients(
          client,
          lockName,
          { real: lab.resources, unclaimed },
          history,
          {
            clients: CLIENTS,
            ttlMs: TTL_MS,
            holdMs: HOLD_MS,
            writesPerHold: WRITES_PER_HOLD,
            waitMs: WAIT_MS,
            // While the fault lasts, whichever holder comes next pauses, one at a time.
            pauseWhileHolding: () => {
              if (!run.pausing || now() < pausedUntil) return 0;
              const ms = run.pauseMs ?? 2.5 * TTL_MS;
              pausedUntil = now() + ms;
              run.pausedAt = now();
              return ms;
            },
          },
          done,
        );
        const idem = lab.idempotency(target);
        const deliveries = idem ? runDeliveries(idem, `${lockName}-key`, 2, TTL_MS, done) : undefined;
        await sleep(beforeMs);
        await fault.inject(run, target);
        run.window.from = now();
        const waiters = run.disconnecting
          ? runDisconnectingWaiters(client, lockName, TTL_MS, history, () => !run.disconnecting, lab.resources.claimFor(lockName))
          : undefined;
        const sockets = run.socketsVanishing ? runVanishingSocketWaiters(client, lockName, TTL_MS, () => !run.socketsVanishing) : undefined;
        await sleep(lastsMs);
        run.window.to = now();
        await fault.heal(run, target, lockName);
        await workload;
        if (waiters) {
          const { hungUp, grantedFirst } = await waiters;
          run.notes.push(`${hungUp} waiters hung up (their abort cut the wait); ${grantedFirst} granted first (in the history)`);
        }
        if (sockets) {
          const { notes, failures } = socketWaitersVerdict(await sockets);
          run.notes.push(...notes);
          run.failures.push(...failures);
        }
        const report = check(history, await lab.resources.log(lockName), { start: startAt, end: Math.max(now(), endAt) });
        run.unclaimed = check(history, unclaimed.log);
        run.notes.push(...claimNotes(history, run.unclaimed));
        const delivered = deliveries ? checkDeliveries(await deliveries) : undefined;
        const failures = [
          ...promisesBroken(report, fault.dataLoss),
          ...(delivered && !fault.dataLoss ? deliveriesBroken(delivered) : []),
          ...(fault.verify?.(report, run) ?? []),
          ...run.failures,
        ];
        const row = { fault: fault.name, target, dataLoss: fault.dataLoss, report, deliveries: delivered, notes: run.notes, failures };
        faultRows.push(row);
        rows.push(row);
      }
      console.log(table(faultRows));
      for (const r of faultRows) {
        for (const n of r.notes) console.log(`- ${r.target}: ${n}`);
        for (const f of r.failures) console.log(`- ${r.target}: BROKEN: ${f}`);
        if (r.report.firstError) console.log(`- ${r.target}: first error: ${r.report.firstError}`);
        if (r.report.firstOverlap) console.log(`- ${r.target}: first overlap: ${r.report.firstOverlap}`);
      }
      console.log(`(${seconds(Date.now() - faultStarted)} s)`);
    }
    if (!only || FLOW_ROW.includes(only)) {
      const flowStarted = Date.now();
      flows = await runFlowRows(lab, quick);
      console.log(`(${seconds(Date.now() - flowStarted)} s)`);
    }
    if (!only || ELECTION_ROW.includes(only)) {
      const electionStarted = Date.now();
      elections = await runElectionRows(lab, quick);
      console.log(`(${seconds(Date.now() - electionStarted)} s)`);
    }
    // Last: on a service that does not shed a flood, it can leave a Worker busy (flood.ts restarts it, to be sure).
    if (!only || FLOOD_ROWS.includes(only)) {
      const floodStarted = Date.now();
      const timings = quick ? QUICK_TIMINGS : FULL_TIMINGS;
      floods = await runFloodRows(lab, onlyFloods ? { ...timings, floods: onlyFloods } : timings);
      console.log(`(${seconds(Date.now() - floodStarted)} s)`);
    }
  } finally {
    await lab.close();
  }
  const broken = rows.filter((r) => r.failures.length).length + floods.broken + flows.broken + elections.broken;
  const summary = `${rows.length + floods.runs + flows.runs + elections.runs} runs${quick ? " (quick)" : ""} in ${seconds(Date.now() - started)} s; ${broken ? `${broken} broke a promise` : "every promise held"}`;
  console.log(`\n${summary}`);
  writeResults(rows, summary);
  process.exit(broken ? 1 : 0);
}

const seconds = (ms: number) => (ms / 1000).toFixed(1);

/** Without data loss, an idempotency key never loses its result and never replays another one. */
function deliveriesBroken(d: IdempotencyReport): string[] {
  const out: string[] = [];
  if (d.lostResults) out.push(`${d.lostResults} idempotency keys lost their result (work done again)`);
  if (d.wrongReplays) out.push(`${d.wrongReplays} idempotency keys replayed another result`);
  return out;
}

/**
 * What claim on grant did in this run: grants given back because a resource
 * had seen a higher fence, and what the in-memory resource, which no grant
 * claims, let through under the same history (the gap claim on grant closes).
 */
function claimNotes(history: History, unclaimed: Report): string[] {
  const refused = history.ops.filter((o) => o.outcome.kind === "claimRefused").length;
  return [
    ...(refused ? [`${refused} grants given back: a resource refused their claim (it had seen a higher fence)`] : []),
    `without claim on grant (the in-memory resource, same writes): ${unclaimed.staleWritesAccepted} stale writes accepted, ${unclaimed.writesRefused} refused`,
  ];
}

/** A resource's write figures, as the tables show them: "ok / refused / stale accepted", Redis then Postgres. */
function writeCells(x: Report): { writes: string; outOfOrder: string } {
  const each = Object.values(x.resources);
  return {
    writes: each.map((w) => `${w.writesAccepted} / ${w.writesRefused} / ${w.staleWritesAccepted}`).join("; ") || "0 / 0 / 0",
    outOfOrder: each.map((w) => String(w.acceptedOutOfOrder)).join("; ") || "0",
  };
}

const HEADER = [
  "store, client",
  "grants",
  "longest gap ms",
  "overlaps (store time, or clients' view across a clock step back)",
  "overlaps (clients' view)",
  "fences back / repeated",
  "writes ok / refused / stale accepted (Redis; Postgres)",
  "out of order (Redis; Postgres)",
  "503s (p99 ms)",
  "other errors",
  "hung",
  "promises",
];

function table(rows: Row[]): string {
  const cells = rows.map((r) => {
    const x = r.report;
    return [
      r.target,
      String(x.grants),
      String(Math.round(x.longestGapMs)),
      x.overlaps ? `${x.overlaps} (max ${Math.round(x.overlapMaxMs)} ms)` : "0",
      x.clientOverlaps ? `${x.clientOverlaps} (max ${Math.round(x.clientOverlapMaxMs)} ms)` : "0",
      `${x.fenceBackwards} / ${x.fenceRepeats}`,
      writeCells(x).writes,
      writeCells(x).outOfOrder,
      x.unavailable ? `${x.unavailable} (${Math.round(x.unavailableP99Ms)})` : "0",
      String(x.errors),
      String(x.hung),
      r.deliveries
        ? `${r.deliveries.completed} / ${r.deliveries.replays} / ${r.deliveries.lostResults} / ${r.deliveries.wrongReplays}`
        : "(mutex only)",
      r.failures.length ? "BROKEN" : "held",
    ];
  });
  const line = (c: string[]) => `| ${c.join(" | ")} |`;
  return [line(HEADER), line(HEADER.map(() => "---")), ...cells.map(line)].join("\n");
}

function writeResults(rows: Row[], summary: string) {
  const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), "results");
  fs.mkdirSync(dir, { recursive: true });
  // The quick mode keeps its own files: latest.* (and the one table the docs copy) stay the full run's.
  const base = quick ? "quick" : "latest";
  fs.writeFileSync(path.join(dir, `${base}.json`), JSON.stringify({ at: new Date().toISOString(), summary, rows }, null, 2));
  const faults = [...new Set(rows.map((r) => r.fault))];
  const md = [
    `# holdfast fault suite (${new Date().toISOString()})`,
    "",
    summary,
    "",
    ...faults.flatMap((f) => {
      const rs = rows.filter((r) => r.fault === f);
      return [
        `## ${f}${rs[0].dataLoss ? " (data loss)" : ""}`,
        "",
        table(rs),
        "",
        ...rs.flatMap((r) => [...r.notes, ...r.failures.map((x) => `BROKEN: ${x}`)].map((n) => `- ${r.target}: ${n}`)),
        "",
      ];
    }),
  ].join("\n");
  fs.writeFileSync(path.join(dir, `${base}.md`), md);
  if (!quick) fs.writeFileSync(path.join(dir, "latest-one-table.md"), oneTable(rows, summary));
  console.log(`results: ${path.relative(process.cwd(), path.join(dir, `${base}.md`))} and ${base}.json`);
}

/** Every run in one table, as docs/guarantees.md shows them. */
function oneTable(rows: Row[], summary: string): string {
  const header = [
    "fault",
    "store, client",
    "grants",
    "longest gap ms",
    "overlaps (store time, or clients' view across a clock step back)",
    "overlaps (clients' view)",
    "fences back / repeated",
    "writes ok / refused / stale accepted (Redis; Postgres)",
    "accepted out of order (Redis; Postgres)",
    "503s (p99 ms)",
    "other errors",
    "hung",
    "idempotency keys: lost result / replayed another",
  ];
  const line = (c: string[]) => `| ${c.join(" | ")} |`;
  const overlap = (n: number, max: number) => (n ? `${n} (${Math.round(max)} ms)` : "0");
  const body = rows.map((r, i) => {
    const x = r.report;
    const fault = `${r.fault}${r.dataLoss ? " **(data loss)**" : ""}`;
    return line([
      i > 0 && rows[i - 1].fault === r.fault ? "" : fault,
      r.target,
      String(x.grants),
      String(Math.round(x.longestGapMs)),
      overlap(x.overlaps, x.overlapMaxMs),
      overlap(x.clientOverlaps, x.clientOverlapMaxMs),
      `${x.fenceBackwards} / ${x.fenceRepeats}`,
      writeCells(x).writes,
      writeCells(x).outOfOrder,
      x.unavailable ? `${x.unavailable} (${Math.round(x.unavailableP99Ms)})` : "0",
      String(x.errors),
      String(x.hung),
      r.deliveries ? `${r.deliveries.lostResults} / ${r.deliveries.wrongReplays} of ${r.deliveries.keys}` : "(mutex only)",
    ]);
  });
  const notes = rows.flatMap((r) => [...r.notes, ...r.failures.map((f) => `BROKEN: ${f}`)].map((n) => `- ${r.fault}, ${r.target}: ${n}`));
  return [
    line(header),
    line(header.map(() => "---")),
    ...body,
    "",
    `${summary} (\`npm run chaos\`, ${new Date().toISOString().slice(0, 10)}).`,
    "",
    ...notes,
    "",
  ].join("\n");
}

main().catch((err) => {
  console.error(err);
  process.exit(2);
});
