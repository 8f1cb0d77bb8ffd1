import { logError } from "../../logError.js";
import { RedisStoreCore } from "../../store/redis/RedisStore.js";
import type { LockStore } from "../../store/types.js";
import type { SocketAt } from "./socketSchemas.js";
import { attachmentOf } from "./socketAttachment.js";
import type { ObjectTimers } from "../timers.js";
import type { StoreKind } from "../line/waitProtocol.js";

/** How long the watchers key lives unless renewed: how long it can outlive watchers this object lost without a word (a reset). */
export const WATCHERS_KEY_MS = 5 * 60_000;
/** Renewed this often while watchers remain (from the alarm when the object hibernates: the timer is a long one). */
const RENEW_MS = 2 * 60_000;
/** A set or delete that failed (the store did not answer) is tried again this much later. */
const RETRY_MS = 5000;

/** What the marker needs of its lock object. */
export interface WatchMarkerHost {
  storeOf(kind: StoreKind): LockStore;
  timers: ObjectTimers;
}

/**
 * The lock's watchers key in Redis (lua/FIELDS.md), kept while this object
 * has watch sockets on the Redis store: set when the first joins (and when a
 * woken object finds its watchers again), renewed while any remain, deleted
 * when the last leaves. The Worker's writes of the lock answer whether it
 * exists, and only then tell this object (src/store/redis/changeNotes.ts): a lock
 * nobody watches costs no object call. Sets and deletes go to Redis one at a
 * time, each doing what the watchers then call for, so they land in order.
 * A quorum has no such key (its Worker tells every write), nor the Durable
 * store (this object makes the writes).
 */
export class WatchMarker {
  /** The lock, from a watcher's socket (this object serves one lock). */
  private lock: SocketAt | undefined;
  private wanted = false;
  /** The last set or delete, and whether another is queued behind it. */
  private last: Promise<void> = Promise.resolve();
  private queued = false;
  private cancelRenew: (() => void) | undefined;

  constructor(private readonly host: WatchMarkerHost) {}

  /** Resolves once the key is as the watchers last called for (a first push reads the state after it). */
  get settled(): Promise<void> {
    return this.last;
  }

  /**
   * The watchers changed (one joined, one left, the object woke): the key is
   * set while any watches on Redis, deleted after the last. A woken object
   * (a new instance: nothing wanted yet) sets it again if it has watchers,
   * and sends nothing if it has none.
   */
  update(sockets: Iterable<WebSocket>): void {
    let at: SocketAt | undefined;
    for (const ws of sockets) {
      const s = attachmentOf(ws);
      if (s && s.phase !== "done" && s.at.store === "redis") {
        at = s.at;
        break;
      }
    }
    if (at) this.lock = at;
    const wanted = at !== undefined;
    if (wanted === this.wanted) return;
    this.wanted = wanted;
    this.renewIn(wanted ? RENEW_MS : undefined);
    this.send();
  }

  private renewIn(ms: number | undefined): void {
    this.cancelRenew?.();
    this.cancelRenew =
      ms === undefined
        ? undefined
        : this.host.timers.after(ms, () => {
            this.renewIn(RENEW_MS);
            this.send();
          });
  }

  /** One set or delete after the one under way (at most one waits: it does what is wanted when it runs). */
  private send(): void {
    if (this.queued) return;
    this.queued = true;
    this.last = this.last.then(() => this.write());
  }

  /** Never throws: the chain of writes (and a first push waiting on it) goes on after a failed one. */
  private async write(): Promise<void> {
    this.queued = false;
    const lock = this.lock;
    if (!lock) return;
    try {
      const store = this.host.storeOf("redis");
      if (!(store instanceof RedisStoreCore)) return;
      await store.markWatchers(lock.kind, lock.ref, this.wanted ? WATCHERS_KEY_MS : undefined);
    } catch (err) {
      logError("the lock's watchers key could not be written; trying again", err);
      if (this.wanted) this.renewIn(RETRY_MS);
    }
  }
}
