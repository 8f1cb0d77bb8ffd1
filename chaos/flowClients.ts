/**
 * The ways a client reaches a flow limit, behind one face for the flow row
 * (flowRow.ts): the library's FlowLimit over the Redis store (its waits
 * poll), and the Worker's HTTP API (waits in the lock object's line, on
 * either store). Each answer becomes a FlowOutcome; nothing throws.
 */
import { FlowLimit, type LockStore } from "../src/index";
import { bounded } from "./lockClients";

export interface FlowShape {
  concurrency: number;
  rate: { count: number; perMs: number };
}

/** A grant as the store reported it: startedAt and expiresAt are on the store's clock (epoch ms). */
export type FlowOutcome =
  | { kind: "granted"; token: string; fence: number; ttlMs: number; expiresAt: number; startedAt: number }
  | { kind: "ok" }
  | { kind: "busy" }
  | { kind: "lost" }
  | { kind: "unavailable" }
  | { kind: "error"; message: string }
  | { kind: "hung" }
  /** Not a flow answer (claim on grant is the mutex workload's own). */
  | { kind: "claimRefused"; fence: number };

export interface FlowClient {
  acquire(name: string, ttlMs: number, waitMs: number): Promise<FlowOutcome>;
  release(name: string, token: string): Promise<FlowOutcome>;
}

export function libraryFlowClient(store: LockStore, limit: FlowShape, namespace: string): FlowClient {
  const flows = new Map<string, FlowLimit>();
  const flow = (name: string) => flows.get(name) ?? flows.set(name, new FlowLimit(store, name, { ...limit, namespace })).get(name)!;
  return {
    acquire: (name, ttlMs, waitMs) =>
      bounded(async () => {
        const g = await flow(name).acquire({ ttlMs, waitMs });
        return { kind: "granted", token: g.token, fence: g.fence, ttlMs: g.ttlMs, expiresAt: g.expiresAt, startedAt: g.startedAt };
      }),
    release: (name, token) =>
      bounded(async () => {
        await flow(name).release(token);
        return { kind: "ok" };
      }),
  };
}

export function workerFlowClient(baseUrl: () => string, apiKey: string, limit: FlowShape): FlowClient {
  const post = async (name: string, step: string, body: unknown): Promise<FlowOutcome | { status: number; json?: Record<string, unknown> }> =>
    bounded(async () => {
      const res = await fetch(`${baseUrl()}/v1/flows/${encodeURIComponent(name)}/${step}`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: res.status, json: (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined };
    });
  const answer = (r: Awaited<ReturnType<typeof post>>, ok: (json: Record<string, unknown>) => FlowOutcome): FlowOutcome => {
    if ("kind" in r) return r;
    if (!r.json) return { kind: "error", message: `${r.status} with a body that was not read` };
    if (r.status === 200) return ok(r.json);
    if (r.json.error === "locked") return { kind: "busy" };
    if (r.json.error === "lease_lost") return { kind: "lost" };
    if (r.status === 503) return { kind: "unavailable" };
    return { kind: "error", message: `${r.status} ${JSON.stringify(r.json).slice(0, 200)}` };
  };
  return {
    acquire: async (name, ttlMs, waitMs) =>
      answer(await post(name, "acquire", { ...limit, ttlMs, waitMs }), (j) => ({
        kind: "granted",
        token: String(j.token),
        fence: Number(j.fence),
        ttlMs: Number(j.ttlMs),
        expiresAt: Number(j.expiresAt),
        startedAt: Number(j.startedAt),
      })),
    release: async (name, token) => answer(await post(name, "release", { token }), () => ({ kind: "ok" })),
  };
}
