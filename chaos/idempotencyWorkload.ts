/**
 * Webhook deliveries, over and over: clients pick one of a few keys, begin
 * it, and either do the work (30 ms) and complete it with a result naming who
 * did it, or get the stored result. The checker then asks the question a
 * payments webhook asks: was any work done again after its result had been
 * stored (a lost result), and did a replay ever answer a different result?
 */
import type { BeginOutcome, IdempotencyClient } from "./idempotencyClients";
import { now, sleep } from "./time";

export interface IdempotencyEvent {
  key: string;
  client: number;
  op: "begin" | "complete";
  invokedAt: number;
  completedAt: number;
  outcome: BeginOutcome;
  /** complete: the result it stored. */
  result?: string;
}

export async function runDeliveries(
  idem: IdempotencyClient,
  prefix: string,
  clients: number,
  ttlMs: number,
  until: () => boolean,
): Promise<IdempotencyEvent[]> {
  const events: IdempotencyEvent[] = [];
  let serial = 0;
  const loop = async (client: number) => {
    while (!until()) {
      const key = `${prefix}-${Math.floor(Math.random() * 12)}`;
      const t0 = now();
      const begun = await idem.begin(key, ttlMs);
      events.push({ key, client, op: "begin", invokedAt: t0, completedAt: now(), outcome: begun });
      if (begun.kind === "started") {
        await sleep(30);
        const result = `client ${client} run ${++serial}`;
        const t1 = now();
        const done = await idem.complete(key, begun.token, { result });
        events.push({ key, client, op: "complete", invokedAt: t1, completedAt: now(), outcome: done, result });
      } else {
        await sleep(begun.kind === "completed" ? 5 : 20);
      }
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, i) => loop(i)));
  return events;
}

export interface IdempotencyReport {
  /** Keys the clients used. */
  keys: number;
  completed: number;
  replays: number;
  /** Keys whose work started again after a complete of it had been answered ok. */
  lostResults: number;
  /** Keys that replayed a result other than the one their accepted complete stored. */
  wrongReplays: number;
}

export function checkDeliveries(events: IdempotencyEvent[]): IdempotencyReport {
  const lost = new Set<string>();
  const wrong = new Set<string>();
  const stored = new Map<string, { result: string; at: number }>();
  for (const e of [...events].sort((a, b) => a.completedAt - b.completedAt)) {
    if (e.op === "complete" && e.outcome.kind === "ok" && e.result && !stored.has(e.key)) stored.set(e.key, { result: e.result, at: e.completedAt });
  }
  for (const e of events) {
    const s = stored.get(e.key);
    if (!s || e.op !== "begin") continue;
    // Asked for after the result was stored, and told to do the work again: the result was lost.
    if (e.outcome.kind === "started" && e.invokedAt > s.at) lost.add(e.key);
    if (e.outcome.kind === "completed" && e.invokedAt > s.at) {
      const got = (e.outcome.response as { result?: string } | null)?.result;
      if (got !== s.result) wrong.add(e.key);
    }
  }
  return {
    keys: new Set(events.map((e) => e.key)).size,
    completed: events.filter((e) => e.op === "complete" && e.outcome.kind === "ok").length,
    replays: events.filter((e) => e.op === "begin" && e.outcome.kind === "completed").length,
    lostResults: lost.size,
    wrongReplays: wrong.size,
  };
}
