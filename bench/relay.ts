/**
 * The relay floor (issue 38): holdfast's socket handoff and its 16-client
 * rate read against a bare relay Durable Object (bench/relayWorker, no
 * holdfast code) that passes a lock along a FIFO of wait sockets with the
 * same messages, driven by the same client in the same run. The target: the
 * socket handoff to `held` within RELAY_TARGET x the relay's p50.
 */
import type { ContendedRow } from "./contended";
import { type HandoffRow, RELAY_LABEL } from "./handoff";
import { ratio } from "./stats";

export const RELAY_TARGET = 1.3;

const STORES = ["Redis", "Durable"] as const;

/** The holdfast socket row (release on the kept socket) of a store. */
function socketRow<R extends { label: string; settings: string }>(rows: R[], store: (typeof STORES)[number]): R | undefined {
  return rows.find((r) => r.label === `holdfast Worker API, ${store} store` && r.settings.startsWith("wait socket"));
}

/** Each store's socket handoff p50 (to `held`) over the relay's, and the Redis store's over the relay's plus one gateway round trip. */
export function handoffOverRelay(rows: HandoffRow[], gatewayPingP50: number): { store: string; over: number; overWithGateway?: number }[] {
  const relay = rows.find((r) => r.label === RELAY_LABEL)?.summary.p50 ?? Number.NaN;
  return STORES.map((store) => {
    const p50 = socketRow(rows, store)?.summary.p50 ?? Number.NaN;
    return { store, over: p50 / relay, ...(store === "Redis" && { overWithGateway: p50 / (relay + gatewayPingP50) }) };
  });
}

/** Table 2's notes on the relay row. */
export function relayHandoffNotes(rows: HandoffRow[], gatewayPingP50: number): string[] {
  if (!rows.some((r) => r.label === RELAY_LABEL)) return [];
  const x = (v: number | undefined) => `${ratio(v)}x`;
  const parts = handoffOverRelay(rows, gatewayPingP50).map((o) =>
    o.overWithGateway === undefined
      ? `${o.store} store ${x(o.over)}`
      : `${o.store} store ${x(o.over)} (${x(o.overWithGateway)} of relay + one gateway PING)`,
  );
  return [
    `relay floor (bench/relayWorker, no holdfast code): a Durable Object per lock, release in, one storage write, granted out, ack in, held out,`,
    `FIFO; the same socket client and hold pattern, taking turns with the holdfast socket rows (5 rounds, each first in turn).`,
    `granted p50/p99 = release sent -> the waiter's \`granted\`; p50/p99 = to \`held\`, when it may act (socket rows).`,
    `socket handoff to held / relay p50: ${parts.join(", ")}; target <= ${RELAY_TARGET}x.`,
  ];
}

/** Table 4's note: each store's socket rate over the relay's. */
export function relayContendedNote(rows: ContendedRow[]): string[] {
  const relay = rows.find((r) => r.label === RELAY_LABEL)?.grantsPerSec;
  if (relay === undefined) return [];
  const parts = STORES.map((store) => `${store} store ${ratio((socketRow(rows, store)?.grantsPerSec ?? Number.NaN) / relay)}x`);
  return [`relay floor row: bench/relayWorker (no holdfast code), same socket client; socket grants/s over the relay's: ${parts.join(", ")}.`];
}
