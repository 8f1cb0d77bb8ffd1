/**
 * The three ways to take a lock that the bench compares, behind one small
 * shape each scenario uses: holdfast's library Mutex, @upstash/lock, and the
 * holdfast Worker's HTTP API. A lock "handle" is a function that releases it.
 */
import { keyAsProtocol, SOCKET_PROTOCOL } from "../src/wire/socketProtocol";
import { Lock } from "@upstash/lock";
import { Redis } from "@upstash/redis";
import { LockedError, Mutex } from "../src/index";
import { HoldfastClient, LockedError as ClientLockedError } from "../src/client/index";
import type { Gateway } from "./stack";
import { rawFetch } from "./roundTrips";

export const NAMESPACE = "bench";
export const TTL_MS = 10_000;

export type Release = () => Promise<void>;

/** An @upstash/redis client on the local gateway, as an application would make one. */
export function upstashRedis(gw: Gateway): Redis {
  return new Redis({ url: gw.url, token: gw.token, enableTelemetry: false });
}

// ---- holdfast library ------------------------------------------------------

export function libraryLock(redis: Redis, name: string) {
  const mutex = new Mutex(redis, name, { namespace: NAMESPACE });
  return {
    /** waitMs 0 tries once; > 0 polls with jittered exponential backoff. Null when not acquired in time. */
    async acquire(waitMs = 0, signal?: AbortSignal): Promise<Release | null> {
      try {
        const grant = await mutex.acquire({ ttlMs: TTL_MS, waitMs, signal });
        return async () => void (await mutex.release(grant.token));
      } catch (err) {
        if (err instanceof LockedError) return null;
        throw err;
      }
    },
  };
}

// ---- @upstash/lock ---------------------------------------------------------

export interface UpstashRetry {
  attempts: number;
  delay: number;
}

/** One Lock object per client: it keeps the UUID of its own acquire for release(). */
export function upstashLock(redis: Redis, name: string, retry?: UpstashRetry) {
  const lock = new Lock({ id: `ul:${name}`, redis, lease: TTL_MS, ...(retry ? { retry } : {}) });
  return {
    async acquire(): Promise<Release | null> {
      if (!(await lock.acquire())) return null;
      return async () => {
        if (!(await lock.release())) throw new Error("@upstash/lock release returned false");
      };
    },
  };
}

// ---- holdfast SDK (holdfast/client) ----------------------------------------

/**
 * The SDK's lock as a bench handle: waits over its socket, and the lease keeps
 * that socket, so the release goes over it (checked: a lease that fell back
 * to HTTP would measure something else). Null on LockedError.
 */
export async function sdkAcquire(client: HoldfastClient, name: string, waitMs: number, signal?: AbortSignal): Promise<Release | null> {
  try {
    const lease = await client.lock(name, { ttlMs: TTL_MS, waitMs, signal });
    if (lease.channel !== "socket") throw new Error(`SDK lease on ${name} is on ${lease.channel}, not its socket`);
    return () => lease.release();
  } catch (err) {
    if (err instanceof ClientLockedError) return null;
    throw err;
  }
}

/** An election's campaign through the SDK, its lease kept on its wait socket (resign over it), as sdkAcquire's. */
export async function sdkCampaign(client: HoldfastClient, name: string, waitMs: number): Promise<Release | null> {
  try {
    const leadership = await client.campaign(name, { value: "bench", ttlMs: TTL_MS, waitMs });
    if (leadership.lease.channel !== "socket") throw new Error(`SDK leadership of ${name} is on ${leadership.lease.channel}, not its socket`);
    return () => leadership.resign();
  } catch (err) {
    if (err instanceof ClientLockedError) return null;
    throw err;
  }
}

// ---- holdfast Worker HTTP API ----------------------------------------------

export class WorkerApi {
  constructor(
    readonly base: string,
    private readonly apiKey: string,
  ) {}

  private headers() {
    return { authorization: `Bearer ${this.apiKey}`, "content-type": "application/json" };
  }

  /** POST /v1/locks/{name}/acquire. Null on 409 locked. */
  async acquire(name: string, waitMs = 0, signal?: AbortSignal): Promise<Release | null> {
    const res = await fetch(`${this.base}/v1/locks/${name}/acquire`, {
      method: "POST",
      headers: this.headers(),
      body: JSON.stringify(waitMs ? { ttlMs: TTL_MS, waitMs } : { ttlMs: TTL_MS }),
      signal,
    });
    const body = (await res.json()) as { token?: string; error?: string; message?: string };
    if (res.status === 409 && body.error === "locked") return null;
    if (res.status !== 200 || !body.token) throw new Error(`acquire ${name}: ${res.status} ${body.error}: ${body.message}`);
    const token = body.token;
    return () => this.release(name, token);
  }

  async release(name: string, token: string): Promise<void> {
    const res = await fetch(`${this.base}/v1/locks/${name}/release`, {
      method: "POST",
      headers: this.headers(),
      body: JSON.stringify({ token }),
    });
    const body = (await res.json()) as { released?: boolean; error?: string };
    if (res.status !== 200 || !body.released) throw new Error(`release ${name}: ${res.status} ${JSON.stringify(body)}`);
  }

  /** POST /v1/rwlocks/{name}/{mode}/acquire, released by its token. Null on 409 locked. */
  async rwAcquire(name: string, mode: "read" | "write", waitMs: number, signal?: AbortSignal): Promise<Release | null> {
    const res = await fetch(`${this.base}/v1/rwlocks/${name}/${mode}/acquire`, {
      method: "POST",
      headers: this.headers(),
      body: JSON.stringify({ ttlMs: TTL_MS, waitMs }),
      signal,
    });
    const body = (await res.json()) as { token?: string; error?: string; message?: string };
    if (res.status === 409 && body.error === "locked") return null;
    if (res.status !== 200 || !body.token) throw new Error(`${mode} acquire ${name}: ${res.status} ${body.error}: ${body.message}`);
    const token = body.token;
    return async () => {
      const r = await fetch(`${this.base}/v1/rwlocks/${name}/${mode}/release`, {
        method: "POST",
        headers: this.headers(),
        body: JSON.stringify({ token }),
      });
      const b = (await r.json()) as { released?: boolean };
      if (r.status !== 200 || !b.released) throw new Error(`${mode} release ${name}: ${r.status} ${JSON.stringify(b)}`);
    };
  }

  /**
   * The same acquire over a wait socket (GET /v1/locks/{name}/wait): acquire
   * (keep: the socket stays open once held), ack the grant, held; the release
   * goes over the same socket, so the lock object hands the lock on with no
   * Worker in between. Null on timeout. A socket is not a fetch, so the
   * bench's request counts do not see it (one socket per wait).
   */
  socketAcquire(name: string, waitMs: number, signal?: AbortSignal): Promise<Release | null> {
    return new Promise((resolve, reject) => {
      const ws = this.openSocket(`/v1/locks/${name}/wait`);
      let token: string | undefined;
      let released: (() => void) | undefined;
      const onAbort = () => ws.close();
      signal?.addEventListener("abort", onAbort, { once: true });
      const done = (fn: () => void) => {
        signal?.removeEventListener("abort", onAbort);
        fn();
      };
      const release: Release = () =>
        new Promise<void>((ok) => {
          released = ok;
          ws.send(JSON.stringify({ type: "release" }));
        });
      ws.onopen = () => ws.send(JSON.stringify({ type: "acquire", ttlMs: TTL_MS, waitMs, keep: true }));
      ws.onmessage = (e) => {
        const m = JSON.parse(String(e.data)) as { type: string; grant?: { token: string }; error?: string; message?: string };
        if (m.type === "granted" && m.grant) {
          token = m.grant.token;
          ws.send(JSON.stringify({ type: "ack", token }));
        } else if (m.type === "held" && token) done(() => resolve(release));
        else if (m.type === "released") released?.();
        else if (m.type === "timeout") done(() => resolve(null));
        else done(() => reject(new Error(`socket acquire ${name}: ${m.error}: ${m.message}`)));
      };
      ws.onclose = () =>
        done(() => (signal?.aborted ? resolve(null) : token ? undefined : reject(new Error(`socket acquire ${name}: closed before an answer`))));
    });
  }

  /**
   * The SDK (holdfast/client) on this Worker, waiting over sockets only (a socket that fails is an
   * error here, not a quiet fall back to HTTP); `WebSocket` lets the bench watch its messages.
   */
  sdk(WebSocketImpl?: typeof WebSocket): HoldfastClient {
    return new HoldfastClient({ baseUrl: this.base, apiKey: this.apiKey, waitChannel: "socket", WebSocket: WebSocketImpl });
  }

  /** A wait socket to `path` with the key as a subprotocol (as a browser sends it). */
  openSocket(path: string): WebSocket {
    return new WebSocket(`${this.base.replace(/^http/, "ws")}${path}`, [SOCKET_PROTOCOL, keyAsProtocol(this.apiKey)]);
  }

  /** GET /v1/locks/{name} .waiters (or another kind's mount point's), sent uncounted (it is the bench watching, not the client). */
  async waiters(name: string, mount = "/v1/locks"): Promise<number> {
    const res = await rawFetch(`${this.base}${mount}/${name}`, { headers: this.headers() });
    const body = (await res.json()) as { waiters?: number };
    if (res.status !== 200 || typeof body.waiters !== "number") throw new Error(`inspect ${name}: ${res.status} ${JSON.stringify(body)}`);
    return body.waiters;
  }
}
