/**
 * The ways a client reaches a lock, behind one face for the workload: the
 * library over a store (one Redis, or a quorum), and the Worker's HTTP API
 * (on either of its stores). Each answer becomes an Outcome; nothing throws.
 */
import { keyAsProtocol, SOCKET_PROTOCOL } from "../src/wire/socketProtocol";
import { type ClaimOnGrant, claimOnGrant, StaleFenceError } from "../src/fence/index";
import { LeaseLostError, LockedError, type LockStore, Mutex, QuorumStore, StoreUnavailableError } from "../src/index";
import type { Outcome } from "./history";

export interface LockClient {
  /** `claim`: claim on grant, the grant answered only once its fence has claimed these resources. */
  acquire(name: string, ttlMs: number, waitMs: number, signal?: AbortSignal, claim?: ClaimOnGrant): Promise<Outcome>;
  /**
   * The Worker's wait socket, for a waiter that goes away: waits, and closes its socket after
   * `goneAfterMs`, or as soon as a grant is offered (never acknowledging it). Answers whether the
   * socket opened, whether it then went (closed, within a bound) and whether a grant was offered
   * before it went: a socket that never opened never stood in the line. Only where a Worker serves the lock.
   */
  vanishingSocketWaiter?(name: string, ttlMs: number, goneAfterMs: number): Promise<SocketWaiterEnd>;
  /** How many wait in the lock's line (GET's `waiters`); only where a Worker serves the lock. */
  waiters?(name: string): Promise<number | undefined>;
  heartbeat(name: string, token: string, ttlMs: number): Promise<Outcome>;
  release(name: string, token: string): Promise<Outcome>;
}

interface SocketWaiterEnd {
  opened: boolean;
  /** Closed after it opened (our close, or the service's), seen within a bound. */
  went: boolean;
  offered: boolean;
}

/** No single request may take longer than this; past it the request counts as hung. */
export const HUNG_MS = 10_000;

export function libraryClient(store: LockStore): LockClient {
  const locks = new Map<string, Mutex>();
  const lock = (name: string) => locks.get(name) ?? locks.set(name, new Mutex(store, name)).get(name)!;
  // A quorum's times are the caller's clock, and its expiresAt is not a grant's time plus ttlMs (history.ts).
  const quorum = store instanceof QuorumStore;
  return {
    acquire: (name, ttlMs, waitMs, signal, claim) =>
      bounded(async () => {
        // The library's own claim-on-grant option.
        const g = await lock(name).acquire({ ttlMs, waitMs, signal, claim });
        const storeStart = quorum ? Date.now() : undefined;
        return { kind: "granted", token: g.token, fence: g.fence, ttlMs: g.ttlMs, expiresAt: g.expiresAt, storeStart };
      }),
    heartbeat: (name, token, ttlMs) =>
      bounded(async () => {
        const r = await lock(name).heartbeat(token, ttlMs);
        return { kind: "ok", expiresAt: r.expiresAt, ttlMs: r.ttlMs };
      }),
    release: (name, token) =>
      bounded(async () => {
        await lock(name).release(token);
        return { kind: "ok" };
      }),
  };
}

export function workerClient(baseUrl: () => string, apiKey: string): LockClient {
  const post = (path: string, body: unknown, signal?: AbortSignal) =>
    bounded(async () => {
      const res = await fetch(`${baseUrl()}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
        body: JSON.stringify(body),
        signal,
      });
      // A body that could not be read (the caller's abort cut it) is no answer: a 200 whose token
      // never arrived is not a grant this client has.
      const json = (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined;
      return { status: res.status, json };
    });
  const answer = (r: Outcome | { status: number; json?: Record<string, unknown> }, ok: (json: Record<string, unknown>) => Outcome): Outcome => {
    if ("kind" in r) return r;
    if (!r.json) return { kind: "error", message: `${r.status} with a body that was not read` };
    if (r.status === 200) return ok(r.json);
    if (r.json.error === "locked") return { kind: "busy" };
    if (r.json.error === "lease_lost") return { kind: "lost" };
    if (r.status === 503) return { kind: "unavailable" };
    return { kind: "error", message: `${r.status} ${JSON.stringify(r.json).slice(0, 200)}` };
  };
  const path = (name: string, op: string) => `/v1/locks/${encodeURIComponent(name)}/${op}`;
  const protocols = [SOCKET_PROTOCOL, keyAsProtocol(apiKey)];
  return {
    vanishingSocketWaiter: (name, ttlMs, goneAfterMs) =>
      new Promise((resolve) => {
        const ws = new WebSocket(`${baseUrl().replace(/^http/, "ws")}${path(name, "wait")}`, protocols);
        const end: SocketWaiterEnd = { opened: false, went: false, offered: false };
        let settle: ReturnType<typeof setTimeout> | undefined;
        const finish = () => {
          clearTimeout(timer);
          clearTimeout(settle);
          resolve(end);
        };
        // Going: close, then wait (bounded) for the close to be seen, so "went" is an effect, not an attempt.
        const go = () => {
          clearTimeout(timer);
          if (ws.readyState === WebSocket.CLOSED) return finish();
          ws.close();
          settle ??= setTimeout(finish, 2000);
        };
        const timer = setTimeout(go, goneAfterMs);
        ws.onopen = () => {
          end.opened = true;
          ws.send(JSON.stringify({ type: "acquire", ttlMs, waitMs: 10_000 }));
        };
        ws.onmessage = (e) => {
          end.offered ||= JSON.parse(String(e.data)).type === "granted";
          go(); // a grant it never acknowledges, or an answer it no longer wants
        };
        ws.onerror = () => {};
        ws.onclose = () => {
          end.went = end.opened;
          finish();
        };
      }),
    waiters: async (name) => {
      const res = await fetch(`${baseUrl()}/v1/locks/${encodeURIComponent(name)}`, { headers: { authorization: `Bearer ${apiKey}` } }).catch(
        () => undefined,
      );
      const json = res?.ok ? ((await res.json()) as { waiters?: unknown }) : undefined;
      return typeof json?.waiters === "number" ? json.waiters : undefined;
    },
    acquire: async (name, ttlMs, waitMs, signal, claim) => {
      const got = answer(await post(path(name, "acquire"), { ttlMs, waitMs }, signal), (j) => ({
        kind: "granted",
        token: String(j.token),
        fence: Number(j.fence),
        ttlMs: Number(j.ttlMs),
        expiresAt: Number(j.expiresAt),
      }));
      if (got.kind !== "granted" || !claim) return got;
      // Claim on grant as the HTTP client's option does it (src/client/grants.ts): the same helper, a refusal gives the lease back.
      const claimed = await bounded(() => claimOnGrant(claim, got.fence, () => post(path(name, "release"), { token: got.token })));
      return claimed === undefined ? got : claimed;
    },
    heartbeat: async (name, token, ttlMs) =>
      answer(await post(path(name, "heartbeat"), { token, ttlMs }), (j) => ({ kind: "ok", expiresAt: Number(j.expiresAt), ttlMs: Number(j.ttlMs) })),
    release: async (name, token) => answer(await post(path(name, "release"), { token }), () => ({ kind: "ok" })),
  };
}

/** What a call that did not succeed became: every Outcome but a grant and an ok. */
type Failure = Exclude<Outcome, { kind: "granted" | "ok" }>;

/** Runs one request, turning what it throws into an Outcome, and a request past HUNG_MS into "hung" (the flow row's clients too). */
export async function bounded<T>(call: () => Promise<T>): Promise<T | Failure> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<Failure>((resolve) => {
    timer = setTimeout(() => resolve({ kind: "hung" }), HUNG_MS);
  });
  try {
    return await Promise.race([call(), hung]);
  } catch (err) {
    if (err instanceof StaleFenceError) return { kind: "claimRefused", fence: err.fence };
    if (err instanceof LockedError) return { kind: "busy" };
    if (err instanceof LeaseLostError) return { kind: "lost" };
    if (err instanceof StoreUnavailableError) return { kind: "unavailable" };
    return { kind: "error", message: err instanceof Error ? `${err.name}: ${err.message}`.slice(0, 200) : String(err) };
  } finally {
    clearTimeout(timer);
  }
}
