/**
 * Idempotency keys through the library (over one Redis) and through the
 * Worker's HTTP API (either store), behind one face for the workload. The
 * quorum has none (it offers the mutex only).
 */
import { Idempotency, InProgressError, LeaseLostError, type LockStore, StoreUnavailableError } from "../src/index";
import { HUNG_MS } from "./lockClients";

export type BeginOutcome =
  | { kind: "started"; token: string }
  | { kind: "completed"; response: unknown }
  | { kind: "busy" }
  | { kind: "lost" }
  | { kind: "ok" }
  | { kind: "unavailable" }
  | { kind: "error"; message: string }
  | { kind: "hung" };

export interface IdempotencyClient {
  begin(key: string, ttlMs: number): Promise<BeginOutcome>;
  complete(key: string, token: string, response: unknown): Promise<BeginOutcome>;
}

/** Results are kept past the end of any run. */
const RETAIN_MS = 600_000;

export function libraryIdempotency(store: LockStore): IdempotencyClient {
  const idem = new Idempotency(store);
  return {
    begin: (key, ttlMs) =>
      bounded(async () => {
        const r = await idem.begin(key, { ttlMs, retainMs: RETAIN_MS });
        return r.state === "started" ? { kind: "started", token: r.token } : { kind: "completed", response: r.response };
      }),
    complete: (key, token, response) =>
      bounded(async () => {
        await idem.complete(key, token, response);
        return { kind: "ok" };
      }),
  };
}

export function workerIdempotency(baseUrl: () => string, apiKey: string): IdempotencyClient {
  const post = (key: string, op: string, body: unknown) =>
    bounded(async (): Promise<BeginOutcome> => {
      const res = await fetch(`${baseUrl()}/v1/idempotency/${encodeURIComponent(key)}/${op}`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const j = (await res.json().catch(() => ({}))) as Record<string, unknown>;
      if (res.status === 201) return { kind: "started", token: String(j.token) };
      if (res.status === 200) return op === "begin" ? { kind: "completed", response: j.response } : { kind: "ok" };
      if (j.error === "in_progress") return { kind: "busy" };
      if (j.error === "lease_lost") return { kind: "lost" };
      if (res.status === 503) return { kind: "unavailable" };
      return { kind: "error", message: `${res.status} ${JSON.stringify(j).slice(0, 200)}` };
    });
  return {
    begin: (key, ttlMs) => post(key, "begin", { ttlMs, retainMs: RETAIN_MS }),
    complete: (key, token, response) => post(key, "complete", { token, response }),
  };
}

async function bounded(call: () => Promise<BeginOutcome>): Promise<BeginOutcome> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<BeginOutcome>((resolve) => {
    timer = setTimeout(() => resolve({ kind: "hung" }), HUNG_MS);
  });
  try {
    return await Promise.race([call(), hung]);
  } catch (err) {
    if (err instanceof InProgressError) return { kind: "busy" };
    if (err instanceof LeaseLostError) return { kind: "lost" };
    if (err instanceof StoreUnavailableError) return { kind: "unavailable" };
    return { kind: "error", message: err instanceof Error ? `${err.name}: ${err.message}`.slice(0, 200) : String(err) };
  } finally {
    clearTimeout(timer);
  }
}
