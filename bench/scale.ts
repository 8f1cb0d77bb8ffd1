/**
 * Figure 9: the scale of one lock (issue 38). How many wait sockets one lock
 * object holds, and what they cost the lock and the runtime:
 * - one lock: a holder and SCALE_WAITERS sockets queued behind it. The first
 *   FIFO_TURNS queue one at a time (each seen in the line before the next
 *   opens), the rest in batches; then the lock goes round the first
 *   FIFO_TURNS in turn (each acks, is held, releases), which must follow the
 *   order they queued. Each turn is a handoff with the whole line behind it,
 *   set against a handoff with one waiter in line taken right after it, on a
 *   second lock of the same Worker (paired turns: the load of a shared machine
 *   moves both alike; measured minutes apart, the ratio swung 0.5-1.9x).
 *   Then all of it again on the same lock: does the next crowd reuse the
 *   memory the first left?
 * - many locks of one namespace: SCALE_LOCKS holders each with up to
 *   SCALE_PER_LOCK waiters (as open files allow), one handoff on a few;
 * - memory: the RSS of the workerd process serving the store (the lock
 *   objects run there on both stores), before, with the sockets, and after
 *   they all closed and RSS stopped moving.
 * Every socket waits with the longest waitMs (WAIT_MAX_MS): a shape must be
 * open and measured within it, or its oldest waiters time out (reported).
 * The Worker's caps must let the shapes in (bench/stack.ts sets them).
 * Every socket is closed at the end, also on error.
 */
import { WAIT_MAX_MS } from "../src/limits";
import type { WorkerApi } from "./clients";
import { until } from "./loop";
import { pidListeningOn, roomForFiles, rssKiB, settledRss } from "./processFiles";
import { int, ms, percentile } from "./stats";
import { fate, inParallel, type Line, openInBatches, Sockets } from "./waitCrowd";

/** Waiters behind one holder on one lock. */
export const SCALE_WAITERS = 10_000;
/** Locks of one namespace, each with a holder and SCALE_PER_LOCK waiters. */
export const SCALE_LOCKS = 1_000;
export const SCALE_PER_LOCK = 10;
/** The first waiters of the big line that take the lock in turn (FIFO checked, handoffs timed). */
const FIFO_TURNS = 50;
/** Handoffs on the many locks; one-waiter handoffs on the reference lock before the shapes, to warm it. */
const SPREAD_HANDOFFS = 30;
const REFERENCE_WARMUP = 5;
/** File descriptors a process keeps for other things besides the sockets. */
const FD_SPARE = 100;
/** Open files workerd holds per socket (seen in /proc/<pid>/fd: the accepted connection and a dup of it). */
const WORKERD_FDS_PER_SOCKET = 2;

interface Handoffs {
  /** Release sent -> next waiter's `granted`, and -> its `held`, in ms. */
  granted: number[];
  held: number[];
}

export interface ScaleRow {
  store: string;
  shape: string;
  asked: number;
  /** Sockets opened in all, holders included. */
  sockets: number;
  /** Sockets the lock objects reported in line (waiting) once all had opened. */
  queued: number;
  openSec: number;
  rss: { before: number; with: number; after: number };
  /** "yes", "no: turn k went to waiter j", or "—". */
  fifo: string;
  handoffs: Handoffs;
  /** Handoffs with one waiter in line on the reference lock, one right after each of this row's. */
  short: Handoffs;
  notes: string[];
}

// ---- the shapes -----------------------------------------------------------

/**
 * The reference lock: a holder and one waiter at a time. Each turn opens a
 * waiter, lets the holder release once the waiter is seen in line, and
 * records the handoff.
 */
class Reference {
  private readonly line: Line;
  private turns = 0;

  constructor(api: WorkerApi, name: string, sockets: Sockets) {
    this.line = sockets.line(api, name);
  }

  async turn(out: Handoffs): Promise<void> {
    if (this.turns === 0) {
      this.line.add();
      await this.line.nextHeld(0);
    }
    const w = this.line.add();
    if (!(await w.opened)) throw new Error(`a waiter on ${this.line.name} did not open (${w.ended})`);
    await until(async () => (await this.line.waiting()) >= 1, 10_000, "the reference waiter to queue", 2);
    const sent = this.line.held[this.turns].release();
    const next = await this.line.nextHeld(++this.turns);
    out.granted.push(next.grantedAt - sent);
    out.held.push(next.heldAt - sent);
  }
}

/** A holder and `waiters` sockets behind it on one lock, then FIFO_TURNS turns. */
async function oneLock(
  store: string,
  api: WorkerApi,
  pid: number | undefined,
  name: string,
  waiters: number,
  shape: string,
  reference: Reference,
): Promise<ScaleRow> {
  const sockets = new Sockets();
  const notes: string[] = [];
  const row: ScaleRow = {
    store,
    shape,
    asked: waiters,
    sockets: waiters + 1,
    queued: 0,
    openSec: Number.NaN,
    rss: { before: Number.NaN, with: Number.NaN, after: Number.NaN },
    fifo: "—",
    handoffs: { granted: [], held: [] },
    short: { granted: [], held: [] },
    notes,
  };
  try {
    row.rss.before = await settledRss(pid);
    const line = sockets.line(api, name);
    line.add();
    let holder = await line.nextHeld(0);
    const t0 = performance.now();
    // The first FIFO_TURNS one at a time, so the order they stand in is known.
    const first = Math.min(FIFO_TURNS, waiters);
    for (let i = 1; i <= first; i++) {
      if (!(await line.add().opened)) throw new Error(`waiter ${i} did not open (${line.waiters[i].ended})`);
      await until(async () => (await line.waiting()) >= i, 10_000, `waiter ${i} to queue`, 2);
    }
    const opened = first + (await openInBatches([line], waiters - first));
    const live = () => line.waiters.filter((w) => w.live).length - 1; // less the holder
    await until(async () => (await line.waiting()) >= live(), 30_000, "the line to form", 50).catch((err) => notes.push(err.message));
    row.openSec = (performance.now() - t0) / 1000;
    row.queued = await line.waiting();
    if (opened < waiters) notes.push(`${int(waiters - opened)} of ${int(waiters)} sockets did not open (refused or failed)`);
    row.rss.with = rssKiB(pid);

    let violation: string | undefined;
    for (let k = 0; k < first; k++) {
      await until(async () => (await line.waiting()) >= 1, 10_000, "a waiter in line", 2); // the same check as the short line's
      const sent = holder.release();
      const next = await line.nextHeld(k + 1);
      row.handoffs.granted.push(next.grantedAt - sent);
      row.handoffs.held.push(next.heldAt - sent);
      if (next.index !== k + 1) violation ??= `turn ${k + 1} went to waiter ${next.index} (waiter ${k + 1}: ${fate(line.waiters[k + 1], sent)})`;
      holder = next;
      await reference.turn(row.short);
    }
    row.fifo = violation ? `no: ${violation}` : `yes (${first})`;
    const timedOut = line.waiters.filter((w) => w.ended === "timeout").length;
    if (timedOut) notes.push(`${int(timedOut)} waiters timed out (waitMs ${WAIT_MAX_MS}) before the turns ended`);
  } catch (err) {
    notes.push(err instanceof Error ? err.message : String(err));
  } finally {
    const unclosed = await sockets.closeAll();
    if (unclosed) notes.push(`${unclosed} sockets had not closed 60 s after close()`);
  }
  await until(async () => (await api.waiters(name)) === 0, 20_000, "the line to empty", 50).catch((err) => notes.push(err.message));
  row.rss.after = await settledRss(pid);
  return row;
}

/**
 * `locks` locks, each with a holder and up to SCALE_PER_LOCK waiters (as
 * many as `room` leaves once the holders hold: a lock object keeps open
 * files of its own), and one handoff on SPREAD_HANDOFFS of them.
 */
async function manyLocks(
  store: string,
  api: WorkerApi,
  pid: number | undefined,
  prefix: string,
  locks: number,
  room: () => number,
  reference: Reference,
): Promise<ScaleRow> {
  const sockets = new Sockets();
  const notes: string[] = [];
  const row: ScaleRow = {
    store,
    shape: `${int(locks)} locks`,
    asked: locks * SCALE_PER_LOCK,
    sockets: locks,
    queued: 0,
    openSec: Number.NaN,
    rss: { before: Number.NaN, with: Number.NaN, after: Number.NaN },
    fifo: "—",
    handoffs: { granted: [], held: [] },
    short: { granted: [], held: [] },
    notes,
  };
  const lines = Array.from({ length: locks }, (_, i) => sockets.line(api, `${prefix}-${i}`));
  try {
    row.rss.before = await settledRss(pid);
    const t0 = performance.now();
    await openInBatches(lines, 1);
    await until(() => lines.every((l) => l.held.length > 0), 30_000, "every holder to hold", 10);
    const perLock = Math.max(1, Math.min(SCALE_PER_LOCK, Math.floor(room() / locks)));
    if (perLock < SCALE_PER_LOCK)
      notes.push(`open files left room for ${int(room())} more sockets once the holders held: ${perLock} waiters per lock`);
    row.shape = `${int(locks)} locks x ${perLock}`;
    row.asked = locks * perLock;
    row.sockets = locks * (perLock + 1);
    const opened = await openInBatches(lines, perLock);
    const counts = await inParallel(lines, 16, async (l) => {
      const live = l.waiters.filter((w) => w.live).length - 1;
      await until(async () => (await l.waiting()) >= live, 10_000, `the line of ${l.name} to form`, 20).catch(() => {});
      return l.waiting();
    });
    row.openSec = (performance.now() - t0) / 1000;
    row.queued = counts.reduce((a, b) => a + b, 0);
    if (opened < row.asked) notes.push(`${int(row.asked - opened)} of ${int(row.asked)} waiting sockets did not open (refused or failed)`);
    row.rss.with = rssKiB(pid);

    const step = Math.max(1, Math.floor(locks / SPREAD_HANDOFFS));
    for (let i = 0; i < locks && row.handoffs.granted.length < SPREAD_HANDOFFS; i += step) {
      const l = lines[i];
      await until(async () => (await l.waiting()) >= 1, 10_000, "a waiter in line", 2);
      const sent = l.held[0].release();
      const next = await l.nextHeld(1);
      row.handoffs.granted.push(next.grantedAt - sent);
      row.handoffs.held.push(next.heldAt - sent);
      await reference.turn(row.short);
    }
    const timedOut = sockets.all().filter((w) => w.ended === "timeout").length;
    if (timedOut) notes.push(`${int(timedOut)} waiters timed out (waitMs ${WAIT_MAX_MS}) before the handoffs ended`);
  } catch (err) {
    notes.push(err instanceof Error ? err.message : String(err));
  } finally {
    const unclosed = await sockets.closeAll();
    if (unclosed) notes.push(`${unclosed} sockets had not closed 60 s after close()`);
  }
  const sample = lines.filter((_, i) => i % Math.max(1, Math.floor(locks / 50)) === 0);
  await until(async () => (await inParallel(sample, 16, (l) => l.waiting())).every((n) => n === 0), 20_000, "the lines to empty", 100).catch((err) =>
    notes.push(err.message),
  );
  row.rss.after = await settledRss(pid);
  return row;
}

/** Both shapes on one store's Worker. */
export async function measureScale(store: string, api: WorkerApi, run: string, opts: { waiters: number; locks: number }): Promise<ScaleRow[]> {
  const port = Number(new URL(api.base).port);
  const pid = pidListeningOn(port);
  // Sockets there is room for now: one TCP connection each, a file in this process and two in workerd.
  const wanted = Math.max(opts.waiters + 1, opts.locks * (SCALE_PER_LOCK + 1));
  const room = () =>
    Math.min(
      roomForFiles("self", wanted + FD_SPARE) - FD_SPARE,
      pid ? Math.floor((roomForFiles(pid, wanted * WORKERD_FDS_PER_SOCKET + FD_SPARE) - FD_SPARE) / WORKERD_FDS_PER_SOCKET) : wanted,
    );
  const waiters = Math.min(opts.waiters, room() - 1);

  const sockets = new Sockets();
  const reference = new Reference(api, `${run}-ref`, sockets);
  const name = `${run}-one`;
  let rows: ScaleRow[];
  try {
    const warmup: Handoffs = { granted: [], held: [] };
    for (let k = 0; k < REFERENCE_WARMUP; k++) await reference.turn(warmup);
    // The same shape twice: whether a second crowd reuses the memory the first left (RSS seldom shrinks).
    rows = [
      await oneLock(store, api, pid, name, waiters, "one lock", reference),
      await oneLock(store, api, pid, name, waiters, "one lock, again", reference),
      await manyLocks(store, api, pid, `${run}-many`, opts.locks, room, reference),
    ];
  } finally {
    await sockets.closeAll();
  }
  if (!pid) rows[0].notes.push(`no process found listening on port ${port} (the workerd serving this store): no RSS`);
  if (waiters < opts.waiters)
    rows[0].notes.push(
      `open files (ulimit -n; this process holds one per socket, workerd two) left room for ${int(waiters + 1)} sockets of the ${int(opts.waiters + 1)} asked`,
    );
  return rows;
}

export const SCALE_HEADER = [
  "store",
  "shape",
  "in line / asked",
  "open s",
  "RSS MiB before / with / after",
  "KiB per socket",
  "FIFO",
  "handoff p50 ms granted / held",
  "1 in line p50 ms",
  "x 1 in line",
];

const mib = (kib: number) => (Number.isFinite(kib) ? (kib / 1024).toFixed(0) : "—");
const p50 = (xs: number[]) => ms(percentile(xs, 50));

export function scaleTableRows(rows: ScaleRow[]): string[][] {
  return rows.map((r) => {
    const ratio = percentile(r.handoffs.granted, 50) / percentile(r.short.granted, 50);
    const ratioHeld = percentile(r.handoffs.held, 50) / percentile(r.short.held, 50);
    return [
      r.store,
      r.shape,
      `${int(r.queued)} / ${int(r.asked)}`,
      ms(r.openSec),
      `${mib(r.rss.before)} / ${mib(r.rss.with)} / ${mib(r.rss.after)}`,
      ((r.rss.with - r.rss.before) / r.sockets).toFixed(1),
      r.fifo,
      `${p50(r.handoffs.granted)} / ${p50(r.handoffs.held)}`,
      r.short.granted.length ? `${p50(r.short.granted)} / ${p50(r.short.held)}` : "—",
      `${Number.isFinite(ratio) ? ratio.toFixed(2) : "—"} / ${Number.isFinite(ratioHeld) ? ratioHeld.toFixed(2) : "—"}`,
    ];
  });
}
