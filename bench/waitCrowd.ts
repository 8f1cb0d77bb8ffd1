/**
 * Crowds of wait sockets for the bench (bench/scale.ts): each socket acks
 * every grant and records when it was granted and held; a lock's sockets in
 * the order they opened and were held; everything opened, to close at the
 * end whatever happened.
 */
import { WAIT_MAX_MS } from "../src/limits";
import type { WorkerApi } from "./clients";
import { until, withTimeout } from "./loop";
import { ms } from "./stats";

/** Sockets opened at once. */
const BATCH = 250;
/** Long enough for a shape's whole run: no lease lapses, no kept socket needs a heartbeat. */
const TTL_MS = 300_000;

/** One wait socket that acks every grant and records when it was granted and held. */
export class Waiter {
  readonly ws: WebSocket;
  grantedAt = 0;
  heldAt = 0;
  private released = false;
  /** Why it ended, if it did: a message type other than held/released, or the close code. */
  ended?: string;
  readonly opened: Promise<boolean>;
  readonly closed: Promise<void>;

  constructor(
    api: WorkerApi,
    private readonly line: Line,
    readonly index: number,
  ) {
    this.ws = api.openSocket(`/v1/locks/${line.name}/wait`);
    let opened: (ok: boolean) => void = () => {};
    let closed: () => void = () => {};
    this.opened = new Promise((r) => (opened = r));
    this.closed = new Promise((r) => (closed = r));
    this.ws.onopen = () => {
      this.ws.send(JSON.stringify({ type: "acquire", ttlMs: TTL_MS, waitMs: WAIT_MAX_MS, keep: true }));
      opened(true);
    };
    this.ws.onerror = () => {};
    this.ws.onclose = (e) => {
      if (!this.released) this.ended ??= `closed ${e.code}`;
      opened(false); // a refused handshake (429 over a cap) closes without opening
      closed();
    };
    this.ws.onmessage = (e) => {
      let m: { type: string; grant?: { token: string }; status?: number; error?: string };
      try {
        m = JSON.parse(String(e.data));
      } catch {
        this.ended ??= "a message that is not JSON";
        return;
      }
      if (m.type === "granted" && m.grant) {
        this.grantedAt = performance.now();
        this.ws.send(JSON.stringify({ type: "ack", token: m.grant.token }));
      } else if (m.type === "held") {
        this.heldAt = performance.now();
        this.line.held.push(this);
      } else if (m.type === "released") this.released = true;
      else this.ended ??= m.type === "error" ? `${m.status} ${m.error}` : m.type;
    };
  }

  get live(): boolean {
    return this.ws.readyState === WebSocket.OPEN && !this.ended;
  }

  /** Sends the release over the socket; answers when it was sent. */
  release(): number {
    const t = performance.now();
    this.ws.send(JSON.stringify({ type: "release" }));
    return t;
  }

  /** Ends the socket: a lease it holds is released first (closing a kept socket releases nothing), then closed. */
  end(): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    // A holder releases; the service closes after `released`.
    if (this.heldAt && !this.released) this.release();
    else this.ws.close(1000);
  }
}

/** The sockets of one lock, in the order they were opened, and the order they were held in. */
export class Line {
  readonly waiters: Waiter[] = [];
  readonly held: Waiter[] = [];

  constructor(
    readonly api: WorkerApi,
    readonly name: string,
  ) {}

  add(): Waiter {
    const w = new Waiter(this.api, this, this.waiters.length);
    this.waiters.push(w);
    return w;
  }

  /** The waiter held after `count` others were; throws if none is within timeoutMs. */
  async nextHeld(count: number, timeoutMs = 20_000): Promise<Waiter> {
    await until(() => this.held.length > count, timeoutMs, `grant ${count + 1} on ${this.name}`);
    return this.held[count];
  }

  /** The line's count of waiting sockets (GET .waiters). */
  waiting(): Promise<number> {
    return this.api.waiters(this.name);
  }
}

/** What became of a waiter, for a FIFO violation's note: its grant relative to `since`, or how it ended. */
export function fate(w: Waiter, since: number): string {
  if (w.ended) return `ended: ${w.ended}${w.grantedAt ? `, granted ${ms(w.grantedAt - since)} ms after the release` : ""}`;
  if (w.heldAt) return `held ${ms(w.heldAt - since)} ms after the release`;
  if (w.grantedAt) return `granted ${ms(w.grantedAt - since)} ms after the release, not held`;
  return w.live ? "still waiting" : "not open";
}

/** Everything opened in one shape, to close at the end whatever happened. */
export class Sockets {
  readonly lines: Line[] = [];

  line(api: WorkerApi, name: string): Line {
    const l = new Line(api, name);
    this.lines.push(l);
    return l;
  }

  all(): Waiter[] {
    return this.lines.flatMap((l) => l.waiters);
  }

  /** Closes every socket (waiting ones first, then holders release) and waits for the closes. */
  async closeAll(timeoutMs = 60_000): Promise<number> {
    const all = this.all();
    for (const w of all) if (!w.heldAt) w.end();
    await withTimeout(Promise.all(all.filter((w) => !w.heldAt).map((w) => w.closed)), timeoutMs, "the waiting sockets to close").catch(() => {});
    for (const w of all) w.end();
    await withTimeout(Promise.all(all.map((w) => w.closed)), timeoutMs, "the holders to release and close").catch(() => {});
    return all.filter((w) => w.ws.readyState !== WebSocket.CLOSED).length;
  }
}

/** Opens `count` sockets on each line, BATCH at a time over all lines; answers how many opened. */
export async function openInBatches(lines: Line[], count: number): Promise<number> {
  const pending = lines.flatMap((l) => Array.from({ length: count }, () => l));
  let opened = 0;
  for (let i = 0; i < pending.length; i += BATCH) {
    const batch = pending.slice(i, i + BATCH).map((l) => l.add());
    opened += (await Promise.all(batch.map((w) => w.opened))).filter(Boolean).length;
  }
  return opened;
}

/** Runs fn over items, `width` at a time. */
export async function inParallel<T, R>(items: T[], width: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]);
      }
    }),
  );
  return out;
}
