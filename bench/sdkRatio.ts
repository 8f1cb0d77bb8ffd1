/**
 * The SDK against the raw wait socket (issue 38): holdfast/client's lock,
 * holding over the socket it waited on, next to the bench's own socket
 * client (clients.ts socketAcquire), same Worker, same run, alternating
 * rounds. The target: within SDK_TARGET of the raw socket (handoff p50 and
 * p99 to `held`, and 16 x 10 ms grants/s).
 */
import type { ContendedRow } from "./contended";
import { type HandoffRow, sdkLabel } from "./handoff";
import { ms, ratio } from "./stats";

export const SDK_TARGET = 0.1;

const STORES = ["Redis", "Durable"] as const;

type Row = { label: string; settings: string };
const raw = <R extends Row>(rows: R[], store: string) =>
  rows.find((r) => r.label === `holdfast Worker API, ${store} store` && r.settings.startsWith("wait socket"));
const sdk = <R extends Row>(rows: R[], store: (typeof STORES)[number]) => rows.find((r) => r.label === sdkLabel(store));

/**
 * Each store's SDK handoff over the raw socket's: p50 and p99 to `held`; and the client's own time per
 * handoff (socketClock.ts), p50 of each, and what the SDK adds as a share of the raw handoff's p50.
 */
export function sdkHandoffOverSocket(
  rows: HandoffRow[],
): { store: string; p50: number; p99: number; ownSdk: number; ownRaw: number; ownAdded: number }[] {
  return STORES.flatMap((store) => {
    const [s, r] = [sdk(rows, store), raw(rows, store)];
    if (!s || !r) return [];
    const ownSdk = s.clientTime?.p50 ?? Number.NaN;
    const ownRaw = r.clientTime?.p50 ?? Number.NaN;
    return [
      { store, p50: s.summary.p50 / r.summary.p50, p99: s.summary.p99 / r.summary.p99, ownSdk, ownRaw, ownAdded: (ownSdk - ownRaw) / r.summary.p50 },
    ];
  });
}

/** Each store's SDK grants/s over the raw socket's, and both rows' max/min grants per client. */
export function sdkContendedOverSocket(rows: ContendedRow[]): { store: string; rate: number; sdkSpread: number; rawSpread: number }[] {
  const spread = (r: ContendedRow) => Math.max(...r.perClient) / Math.min(...r.perClient);
  return STORES.flatMap((store) => {
    const [s, r] = [sdk(rows, store), raw(rows, store)];
    return s && r ? [{ store, rate: s.grantsPerSec / r.grantsPerSec, sdkSpread: spread(s), rawSpread: spread(r) }] : [];
  });
}

const x = (v: number) => `${ratio(v)}x`;

/** Table 2's note on the SDK rows. */
export function sdkHandoffNotes(rows: HandoffRow[]): string[] {
  const ratios = sdkHandoffOverSocket(rows);
  if (!ratios.length) return [];
  const parts = ratios.map((o) => `${o.store} store p50 ${x(o.p50)}, p99 ${x(o.p99)}`);
  const own = ratios.map(
    (o) => `${o.store} store SDK ${ms(o.ownSdk)} ms, raw ${ms(o.ownRaw)} ms (+${ratio(100 * o.ownAdded, 1)} % of the raw handoff p50)`,
  );
  return [
    "SDK rows: holdfast/client's client.lock() (waitChannel socket) holding over the socket it waited on, its lease's release sent there;",
    `the same hold pattern, taking turns with the socket rows. SDK / raw socket handoff to held: ${parts.join("; ")}; target <= ${x(1 + SDK_TARGET)}.`,
    "The client's own time per handoff (release() -> its frame sent, + `held` in -> acquire resolved; the server's part left out), p50:",
    `  ${own.join("; ")}.`,
  ];
}

/** Table 3/4's note on the SDK rows. */
export function sdkContendedNotes(rows: ContendedRow[]): string[] {
  const parts = sdkContendedOverSocket(rows).map(
    (o) => `${o.store} store ${x(o.rate)} (max/min SDK ${ratio(o.sdkSpread)}, raw ${ratio(o.rawSpread)})`,
  );
  if (!parts.length) return [];
  return [
    `SDK rows: one HoldfastClient per client, leases released over their sockets, taking turns with the socket rows. SDK / raw socket grants/s:`,
    `  ${parts.join("; ")}; target >= ${x(1 - SDK_TARGET)}.`,
  ];
}
