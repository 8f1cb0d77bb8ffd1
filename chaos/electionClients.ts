/**
 * The ways a client reaches an election, behind one face for the election row
 * (electionRow.ts): campaigners over the library's Election on the Redis
 * store (its waits poll) or the Worker's HTTP API (waits in the lock object's
 * line, on either store), each answer an ElectionOutcome (nothing throws);
 * and observers: the TypeScript client's observe over the Worker (the watch
 * socket, resuming by itself), or, for the library, which has no lock object
 * to push from, a loop reading the history (Election.changes) as docs/API.md
 * tells an observer to.
 */
import { type ElectionChange, HoldfastClient } from "../src/client/index";
import { Election, type LockStore } from "../src/index";
import { bounded } from "./lockClients";
import { sleep } from "./time";

export type ElectionOutcome =
  /** Leads: the lease's fence is the term; expiresAt on the store's clock. */
  | { kind: "granted"; token: string; fence: number; ttlMs: number; expiresAt: number }
  | { kind: "ok"; expiresAt?: number; position?: number }
  | { kind: "busy" }
  | { kind: "lost" }
  | { kind: "unavailable" }
  | { kind: "error"; message: string }
  | { kind: "hung" }
  /** Not an election answer (claim on grant is the mutex workload's own). */
  | { kind: "claimRefused"; fence: number };

export interface ElectionClient {
  campaign(name: string, value: string, ttlMs: number, waitMs: number): Promise<ElectionOutcome>;
  proclaim(name: string, token: string, value: string): Promise<ElectionOutcome>;
  heartbeat(name: string, token: string, ttlMs: number): Promise<ElectionOutcome>;
  resign(name: string, token: string): Promise<ElectionOutcome>;
}

/** An observer's changes as it was told them, in order; `failure` if it ended on its own. */
export interface ElectionWatcher {
  readonly changes: ElectionChange[];
  failure?: string;
  close(): void;
}

export function libraryElectionClient(store: LockStore, namespace: string): ElectionClient {
  const elections = new Map<string, Election>();
  const election = (name: string) => elections.get(name) ?? elections.set(name, new Election(store, name, { namespace })).get(name)!;
  return {
    campaign: (name, value, ttlMs, waitMs) =>
      bounded(async () => {
        const g = await election(name).campaign({ value, ttlMs, waitMs });
        return { kind: "granted", token: g.token, fence: g.fence, ttlMs: g.ttlMs, expiresAt: g.expiresAt };
      }),
    proclaim: (name, token, value) =>
      bounded(async () => {
        const r = await election(name).proclaim(token, value);
        return { kind: "ok", expiresAt: r.expiresAt, position: r.position };
      }),
    heartbeat: (name, token, ttlMs) =>
      bounded(async () => {
        const r = await election(name).heartbeat(token, ttlMs);
        return { kind: "ok", expiresAt: r.expiresAt };
      }),
    resign: (name, token) =>
      bounded(async () => {
        await election(name).resign(token);
        return { kind: "ok" };
      }),
  };
}

export function workerElectionClient(baseUrl: () => string, apiKey: string): ElectionClient {
  const post = async (name: string, step: string, body: unknown) =>
    bounded(async () => {
      const res = await fetch(`${baseUrl()}/v1/elections/${encodeURIComponent(name)}/${step}`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: res.status, json: (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined };
    });
  const answer = (r: Awaited<ReturnType<typeof post>>, ok: (json: Record<string, unknown>) => ElectionOutcome): ElectionOutcome => {
    if ("kind" in r) return r;
    if (!r.json) return { kind: "error", message: `${r.status} with a body that was not read` };
    if (r.status === 200) return ok(r.json);
    if (r.json.error === "locked") return { kind: "busy" };
    if (r.json.error === "lease_lost") return { kind: "lost" };
    if (r.status === 503) return { kind: "unavailable" };
    return { kind: "error", message: `${r.status} ${JSON.stringify(r.json).slice(0, 200)}` };
  };
  return {
    campaign: async (name, value, ttlMs, waitMs) =>
      answer(await post(name, "campaign", { value, ttlMs, waitMs }), (j) => ({
        kind: "granted",
        token: String(j.token),
        fence: Number(j.fence),
        ttlMs: Number(j.ttlMs),
        expiresAt: Number(j.expiresAt),
      })),
    proclaim: async (name, token, value) =>
      answer(await post(name, "proclaim", { token, value }), (j) => ({ kind: "ok", expiresAt: Number(j.expiresAt), position: Number(j.position) })),
    heartbeat: async (name, token, ttlMs) =>
      answer(await post(name, "heartbeat", { token, ttlMs }), (j) => ({ kind: "ok", expiresAt: Number(j.expiresAt) })),
    resign: async (name, token) => answer(await post(name, "resign", { token }), () => ({ kind: "ok" })),
  };
}

/** Where the client's requests are sent before the Worker's address is put in (a restart moves its port). */
const STAND_IN = "http://worker.invalid";

/**
 * client.observe(name) from position 0 over the Worker at baseUrl(): its fetch and WebSocket put
 * in the Worker's address of the moment, so a Worker restarted on another port is found again as
 * a deploy would be, by the observer's own reconnecting.
 */
export function workerObserver(baseUrl: () => string, apiKey: string, name: string): ElectionWatcher {
  const at = (url: string | URL) => String(url).replace(STAND_IN, baseUrl()).replace(STAND_IN.replace("http", "ws"), baseUrl().replace("http", "ws"));
  class RoutedWebSocket extends WebSocket {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(at(url), protocols);
    }
  }
  const client = new HoldfastClient({
    baseUrl: STAND_IN,
    apiKey,
    fetch: (input, init) => fetch(input instanceof Request ? new Request(at(input.url), input) : at(input), init),
    WebSocket: RoutedWebSocket,
    timeoutMs: 2000,
  });
  const observer = client.observe(name, { since: 0 });
  const watcher: ElectionWatcher = { changes: [], close: () => observer.close() };
  void (async () => {
    try {
      for await (const change of observer) watcher.changes.push(change);
    } catch (err) {
      watcher.failure = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    }
  })();
  return watcher;
}

/**
 * An observer through the library: it reads the changes after the last it told every pollMs; where
 * the history no longer reaches back (its first is above the next one wanted), it tells the newest
 * with `missed`, as client.observe does. Errors (a store away) are retried at the next poll.
 */
export function libraryObserver(store: LockStore, namespace: string, name: string, pollMs: number): ElectionWatcher {
  const election = new Election(store, name, { namespace });
  let closed = false;
  const watcher: ElectionWatcher = {
    changes: [],
    close: () => {
      closed = true;
    },
  };
  void (async () => {
    let last = 0;
    while (!closed) {
      const view = await election.changes(last).catch(() => undefined);
      if (view?.changes.length) {
        if (view.first !== null && view.first > last + 1) {
          const newest = view.changes[view.changes.length - 1];
          watcher.changes.push({ ...newest, missed: true });
        } else for (const c of view.changes) watcher.changes.push({ ...c, missed: false });
        last = watcher.changes[watcher.changes.length - 1].position;
      }
      await sleep(pollMs);
    }
  })();
  return watcher;
}
