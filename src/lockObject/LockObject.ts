import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env.js";
import { writeMetric } from "../metrics.js";
import { InternalError, StoreUnavailableError } from "../errors.js";
import type { KindName } from "../store/kinds.js";
import type { LockRef, LockStore } from "../store/types.js";
import { ListingUpdates } from "./listingUpdates.js";
import { earliest } from "../store/durable/records.js";
import { KeptKv } from "../store/durable/KeptKv.js";
import { type LocalStore, localStoreOf } from "./LocalStore.js";
import type { LockObjectHost } from "./LockObjectHost.js";
import type { LockObjectRpc } from "../store/durable/LockObjectRpc.js";
import { type ObjectKinds, type Served, waitRequestOf, watchedRead } from "./ObjectKinds.js";
import type { KindObjectPart } from "./KindObjectPart.js";
import { Line, type LineHost } from "./line/Line.js";
import type { StoreKind } from "./line/waitProtocol.js";
import { AlarmTimers } from "./timers.js";
import { SocketCaps } from "./sockets/socketCaps.js";
import { WaitSockets } from "./sockets/WaitSockets.js";
import { isSocketRequest } from "./sockets/socketSchemas.js";
import { HttpWaits } from "./line/HttpWaits.js";
import { Waiters } from "./line/Waiters.js";
import { WatchSockets } from "./sockets/WatchSockets.js";
import { checkExpiries, deliverDueNotifications, dropExpiry, expiryCount, keepExpiry, nextExpiryTime } from "./expiries/expiries.js";

/**
 * One lock object per (kind, namespace, name): which store to act on (Redis
 * from its own configuration, or its own storage), the lock's line (Line.ts,
 * driven here, calling the kind's part for its hooks), its waiters over HTTP
 * and on sockets, its watch sockets, the expiries for onExpire, and one
 * alarm for what is stored. Every entry point names the kind and reaches it
 * the same way: there is no method per operation or per kind. On the Redis
 * store the Worker runs uncontended operations in Redis and comes here only
 * to wait, to watch, or to note a write it made. No credentials are stored.
 */
export class LockObjectCore extends DurableObject<Env> implements LockObjectRpc {
  /** Long timers (a socket waiter's deadline, a wake-up at a lease's end) run from the alarm, so the object may hibernate. */
  private readonly timers = new AlarmTimers(() => this.schedule());
  /** What a kind's part gets from the core (LockObjectHost.ts), made in the constructor from the kinds handed in. */
  private readonly host: LockObjectHost;
  /** What the line gets from the core (Line.ts). */
  private readonly lineHost: LineHost;
  /** The caps on waiters per lock and sockets per namespace (socketCaps.ts). */
  private readonly caps = new SocketCaps(
    this.env,
    () => this.waitSockets.liveCount + this.watchSockets.liveCount,
    () => this.waiters.count("http"),
  );
  /** Every wait in progress here, HTTP and socket alike: one registry (line/Waiters.ts). */
  private readonly waiters = new Waiters();
  /** Waiters on WebSockets (WaitSockets.ts): in the same line as HTTP waiters. */
  private readonly waitSockets: WaitSockets = new WaitSockets({
    ctx: this.ctx,
    env: this.env,
    part: (kind) => this.part(kind),
    line: (kind) => this.line(kind),
    acquireBody: (kind) => this.serve(kind).object.acquireBody,
    afterWait: (at, result) => this.afterWait(at, result),
    timers: this.timers,
    caps: this.caps,
    waiters: this.waiters,
  });
  /** Watch sockets (WatchSockets.ts): the lock's state pushed when it changes; under the same caps. */
  private readonly watchSockets: WatchSockets = new WatchSockets({
    ctx: this.ctx,
    env: this.env,
    read: (at, since) => watchedRead(this.serve(at.kind).object, this.storeOf(at.store), at.ref, () => this.line(at.kind).count, since),
    storeOf: (kind) => this.storeOf(kind),
    timers: this.timers,
    caps: this.caps,
  });
  /** On the Durable store: the namespace's listing hears of this lock (listingUpdates.ts). */
  private readonly listing = new ListingUpdates(this.env.NAMESPACE_OBJECT);
  /** Waiters over HTTP (HttpWaits.ts): in the same line as the sockets. */
  private readonly httpWaits: HttpWaits = new HttpWaits({
    waitRequest: () => (this.waitRequest ??= waitRequestOf(this.kinds.kinds)),
    caps: this.caps,
    waiters: this.waiters,
    line: (kind) => this.line(kind),
    afterWait: (at, result) => this.afterWait(at, result),
  });
  /** The request to this object (POST /wait), every kind's, made at the first. */
  private waitRequest: ReturnType<typeof waitRequestOf> | undefined;
  /** The one kind this object serves, its part and its line, made at its first request. */
  private served: Served | undefined;
  /** The alarm this instance last set (the runtime clears it when it fires). */
  private alarmAt: number | undefined;
  /** On the Durable store: a lazy bound on when stored state next needs cleaning up. */
  private cleanupAt: number | undefined;
  /** This object's storage.kv, what it read and wrote kept in memory (KeptKv.ts): every read and write of it goes through here. */
  private readonly kv: KeptKv;

  /**
   * @param kinds  what the kinds bring (ObjectKinds.ts): handed in by the Worker's entry point
   *   (src/worker.ts), which binds the class to its list of kinds; the core names no kind.
   */
  constructor(
    ctx: DurableObjectState,
    env: Env,
    private readonly kinds: ObjectKinds,
  ) {
    super(ctx, env);
    this.kv = new KeptKv(ctx.storage.kv);
    this.ownStore = localStoreOf(this.kv, kinds.kinds);
    this.host = {
      ownStore: this.ownStore,
      storeOf: (kind) => this.storeOf(kind),
      noteWrite: (note, store) => this.served?.line.noteWrite(note, store),
      pickedUp: (token) => this.served?.line.pickedUp(token),
      timers: this.timers,
    };
    this.lineHost = {
      storeOf: (kind) => this.storeOf(kind),
      timers: this.timers,
      changed: () => this.watchSockets.changed(),
      keepExpiry: (lease) => keepExpiry(this.kv, lease),
      dropExpiry: (id) => dropExpiry(this.kv, id),
    };
    // Woken from hibernation with sockets still waiting: they take their places in the line again.
    this.waitSockets.restore();
    this.watchSockets.restore();
  }

  /** This object's own storage as a store (the Durable store), with its cleanup. */
  private readonly ownStore: LocalStore & LockStore;

  /** The Redis store (or quorum) of this object's configuration, found at its first use: an object's configuration is fixed for its life. */
  private redis: LockStore | undefined;

  private storeOf(kind: StoreKind): LockStore {
    if (kind === "durable") return this.host.ownStore;
    this.redis ??= this.kinds.redisStoreOf(this.env);
    if (!this.redis) throw new StoreUnavailableError("the lock object has no Upstash configuration", "not_applied");
    return this.redis;
  }

  /** The kind this object serves: what it brings, its part and its line, made at the first request (one object serves one kind). */
  private serve(kind: KindName): Served {
    if (!this.served) {
      const object = this.kinds.kinds.find((k) => k.name === kind)?.object;
      if (!object) throw new InternalError(`this service has no kind ${kind}`);
      const part = object.part(this.host);
      this.served = { kind, object, part, line: new Line(kind, part, this.lineHost) };
    }
    if (this.served.kind !== kind) throw new InternalError(`this lock object serves the ${this.served.kind}, not the ${kind}`);
    return this.served;
  }

  private part(kind: KindName): KindObjectPart {
    return this.serve(kind).part;
  }

  private line(kind: KindName): Line {
    return this.serve(kind).line;
  }

  // ---- Worker -> object, both stores ----------------------------------------------------------

  /**
   * POST /wait with a wait request: answered once granted, refused or timed
   * out. Fetch, so a disconnect aborts it. Or a wait socket handed over by
   * the Worker (WaitSockets.ts).
   */
  async fetch(request: Request): Promise<Response> {
    if (isSocketRequest(request))
      return await (WatchSockets.isWatchRequest(request) ? this.watchSockets.accept(request) : this.waitSockets.accept(request));
    return await this.httpWaits.serve(request);
  }

  /** The Worker's client of an HTTP wait hung up: that waiter leaves the line. */
  withdraw(waiterId: string): void {
    this.waiters.withdraw(waiterId);
  }

  webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): void {
    if (this.watchSockets.has(ws)) this.watchSockets.message(ws, message);
    else this.waitSockets.message(ws, message);
  }

  webSocketClose(ws: WebSocket): void {
    this.webSocketError(ws);
    // The runtime does not answer a client's Close frame for a hibernatable socket: answered here, or the
    // client waits in CLOSING for a close that never completes (1005, 1006 and 1015 may not be sent: 1000).
    try {
      ws.close(1000, "closed");
    } catch {
      // Already closed from this side.
    }
  }

  webSocketError(ws: WebSocket): void {
    if (this.watchSockets.has(ws)) this.watchSockets.closed(ws);
    else this.waitSockets.closed(ws);
  }

  /** On the Durable store a wait may have written here (a grant, a begun key): clean-up and the listing follow it. */
  private afterWait(at: { store: StoreKind; kind: KindName; ref: LockRef }, result: unknown): void {
    this.watchSockets.changed();
    if (at.store !== "durable") {
      this.schedule();
      return;
    }
    this.listing.after(at.kind, at.ref, [], result);
    this.afterWrite(undefined);
  }

  /** Redis store: the Worker's note of a write it made there (a release, a key given up). */
  noteWrite(kind: KindName, note: unknown): void {
    this.line(kind).noteWrite(note, "redis");
    this.watchSockets.changed();
    this.schedule();
  }

  /** Redis store: the Worker changed the lock there (an acquire, a heartbeat, a release): its watch sockets are told. */
  noteChange(_kind: KindName): void {
    this.watchSockets.changed();
  }

  /** The Worker delivered a queued grant's answer to its client. */
  pickedUp(kind: KindName, token: string): void {
    this.line(kind).pickedUp(token);
  }

  /** The Worker could not deliver a queued grant's answer: its client was gone. */
  takeBack(kind: KindName, token: string): void {
    this.line(kind).takeBack(token);
    this.watchSockets.changed();
  }

  waiterCount(kind: KindName): number {
    return this.line(kind).count;
  }

  /** The Durable store (DurableStore calls this): one of the kind's operations, on the state kept here. */
  async run(kind: KindName, op: string, args: unknown[]): Promise<unknown> {
    const ops = this.part(kind).durableOps as unknown as Record<string, ((...a: unknown[]) => Promise<unknown>) | undefined>;
    const fn = ops[op]?.bind(ops);
    if (typeof fn !== "function") throw new InternalError(`the ${kind} has no operation ${op}`);
    const result = await fn(...args);
    if (op !== "inspect") {
      this.listing.after(kind, args[0] as LockRef, args, result);
      this.watchSockets.changed();
    }
    return this.afterWrite(result);
  }

  ping(): boolean {
    return true;
  }

  // ---- the one alarm ----------------------------------------------------------------------------

  async alarm(): Promise<void> {
    const now = Date.now();
    this.alarmAt = undefined;
    this.timers.runDue(now);
    // A lease kept for onExpire that lapsed is a metric too (src/metrics.ts; other lapses are seen by nobody).
    await checkExpiries(
      this.kv,
      (kind) => this.storeOf(kind),
      now,
      (l) => writeMetric(this.env, l.ns, l.kind, "lapse"),
    );
    await deliverDueNotifications(this.kv, this.env.WEBHOOK_SECRET ?? "", Date.now());
    this.cleanupAt = this.ownStore.nextCleanup(Date.now(), true);
    const waiting = this.timers.next() !== undefined || this.ctx.getWebSockets().length > 0;
    if (this.cleanupAt === undefined && !expiryCount(this.kv) && !waiting) {
      this.kv.forget();
      await this.ctx.storage.deleteAll(); // nothing left to keep, not even a fence
      this.kv.forget();
      return;
    }
    this.schedule();
  }

  /** After a write to this object's storage: make sure an alarm will clean it up. */
  private afterWrite<T>(result: T): T {
    const due = this.ownStore.nextCleanup(Date.now(), false);
    if (due !== undefined) this.cleanupAt = Math.min(this.cleanupAt ?? Infinity, due);
    this.schedule();
    return result;
  }

  /**
   * One alarm for what is stored: expiry checks, notification retries,
   * clean-up, and the lines' long timers (timers.ts; short ones are setTimeouts). Only ever moved
   * earlier between alarms (the alarm itself recomputes), so a busy lock does
   * not pay a storage write per request.
   */
  private schedule(): void {
    const next = earliest(earliest(nextExpiryTime(this.kv), this.cleanupAt), this.timers.next());
    if (next === undefined) return;
    if (this.alarmAt !== undefined && this.alarmAt <= next && this.alarmAt > Date.now()) return;
    this.alarmAt = next;
    void this.ctx.storage.setAlarm(next);
  }
}
