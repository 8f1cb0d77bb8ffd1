/**
 * Figure 8: a crowd of vanished waiters ahead of a live one. N clients queue
 * on a held lock, a live client queues behind them, the N go away (a wait
 * socket closes; an HTTP long-poll is aborted, its connection closed), and
 * the holder releases at once. The figure: release sent -> the live client
 * granted, i.e. what the vanished crowd cost the live waiter.
 */
import type { Release, WorkerApi } from "./clients";
import { until, withTimeout } from "./loop";
import { ms } from "./stats";

export interface VanishedRow {
  store: string;
  channel: "wait socket" | "HTTP long-poll";
  crowd: number;
  /** Release sent -> live client granted. */
  grantMs: number;
  note?: string;
}

const WAIT_MS = 60_000;

export async function measureVanished(
  store: string,
  api: WorkerApi,
  channel: VanishedRow["channel"],
  crowd: number,
  name: string,
): Promise<VanishedRow> {
  const socket = channel === "wait socket";
  try {
    const holder = (await api.acquire(name)) as Release;
    const gone: Array<() => void> = [];
    for (let i = 0; i < crowd; i++) {
      if (socket) {
        const ws = api.openSocket(`/v1/locks/${name}/wait`);
        ws.onopen = () => ws.send(JSON.stringify({ type: "acquire", ttlMs: 10_000, waitMs: WAIT_MS }));
        ws.onerror = () => {};
        gone.push(() => ws.close());
      } else {
        const controller = new AbortController();
        api.acquire(name, WAIT_MS, controller.signal).catch(() => null);
        gone.push(() => controller.abort());
      }
    }
    await until(async () => (await api.waiters(name)) >= crowd, 20_000, "the crowd to queue");
    const live = socket ? api.socketAcquire(name, WAIT_MS) : api.acquire(name, WAIT_MS);
    await until(async () => (await api.waiters(name)) >= crowd + 1, 20_000, "the live waiter to queue");
    for (const leave of gone) leave();
    const t0 = performance.now();
    await holder();
    const granted = await withTimeout(live, WAIT_MS + 5000, "the live waiter");
    const grantMs = performance.now() - t0;
    await granted?.();
    return { store, channel, crowd, grantMs };
  } catch (err) {
    return { store, channel, crowd, grantMs: Number.NaN, note: err instanceof Error ? err.message : String(err) };
  }
}

export const VANISHED_HEADER = ["store", "channel", "vanished ahead", "release -> live granted ms", "per vanished waiter ms"];

export function vanishedTableRows(rows: VanishedRow[]): string[][] {
  return rows.map((r) => [r.store, r.channel, String(r.crowd), ms(r.grantMs), ms(r.grantMs / r.crowd)]);
}
