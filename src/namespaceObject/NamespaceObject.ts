import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env.js";
import type { KindName } from "../store/kinds.js";
import { AUDIT_KEEP_MS, type AuditEntry, type AuditRecord } from "../store/OperatorOps.js";
import type { NamespaceObjectRpc } from "../store/durable/NamespaceObjectRpc.js";
import { openRateOf, SocketOpens } from "../admission/socketOpens.js";

/** How long a lock object's socket count stands without being told again (socketCaps.ts tells it more often). */
const SOCKETS_TOLD_FOR_MS = 15 * 60 * 1000;

/** How often the alarm drops entries past their time, at most. */
const PRUNE_EVERY_MS = 60 * 60 * 1000;

/**
 * Two per namespace, one per job (namespaceObjectOf: the listing's is named
 * by the namespace, the sockets' `sockets:<ns>`). The listing's, on the
 * Durable store: the names of the namespace's locks that were active lately
 * (each lock object tells it, at most every few minutes:
 * src/lockObject/listingUpdates.ts), for listing; and the audit log of force
 * releases, kept AUDIT_KEEP_MS. On the Redis store both live in Redis. The
 * sockets', on both stores: the namespace's open wait sockets, per lock
 * object, for the cap on them, its floods and its rate of new sockets
 * (src/lockObject/sockets/socketCaps.ts), apart so that a handshake never
 * waits behind the listing's notes. SQLite, so a page is one indexed range read.
 */
export class NamespaceObject extends DurableObject<Env> implements NamespaceObjectRpc {
  private readonly sql = this.ctx.storage.sql;
  /** The namespace's rate of new sockets per key and address (socketOpens.ts), over every isolate's handshakes. */
  private readonly opens = new SocketOpens();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql.exec(
      `CREATE TABLE IF NOT EXISTS locks (kind TEXT NOT NULL, name TEXT NOT NULL, until INTEGER NOT NULL, PRIMARY KEY (kind, name));
       CREATE TABLE IF NOT EXISTS audit (id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, record TEXT NOT NULL);
       CREATE TABLE IF NOT EXISTS sockets (object TEXT PRIMARY KEY, count INTEGER NOT NULL, until INTEGER NOT NULL);
       CREATE TABLE IF NOT EXISTS floods (client TEXT PRIMARY KEY, until INTEGER NOT NULL);`,
    );
  }

  /** A lock object of this namespace is (or may be) active until `until`: list it till then. */
  note(kind: KindName, name: string, until: number): void {
    this.sql.exec(
      "INSERT INTO locks (kind, name, until) VALUES (?, ?, ?) ON CONFLICT (kind, name) DO UPDATE SET until = max(until, excluded.until)",
      kind,
      name,
      until,
    );
    void this.pruneLater();
  }

  /** Names of the kind listed now, in name order, after `after`, starting with `prefix`. */
  names(kind: KindName, prefix: string, after: string | undefined, limit: number): string[] {
    const start = after !== undefined && after >= prefix ? after : prefix;
    const rows = this.sql.exec<{ name: string }>(
      `SELECT name FROM locks WHERE kind = ? AND name ${after !== undefined && after >= prefix ? ">" : ">="} ? AND name < ? AND until > ?
       ORDER BY name LIMIT ?`,
      kind,
      start,
      // Every name with the prefix sorts below prefix + DEL (names are printable ASCII): one range of the index.
      `${prefix}\x7f`,
      Date.now(),
      limit,
    );
    return rows.toArray().map((r) => r.name);
  }

  appendAudit(record: AuditRecord): AuditEntry {
    const at = Date.now();
    const row = this.sql.exec<{ id: number }>("INSERT INTO audit (at, record) VALUES (?, ?) RETURNING id", at, JSON.stringify(record)).one();
    void this.pruneLater();
    return { id: String(row.id), at, ...record };
  }

  /** Newest first, before the entry `before` (an id this answered). */
  audit(limit: number, before: number | undefined): AuditEntry[] {
    const rows = this.sql.exec<{ id: number; at: number; record: string }>(
      "SELECT id, at, record FROM audit WHERE id < ? AND at > ? ORDER BY id DESC LIMIT ?",
      before ?? Number.MAX_SAFE_INTEGER,
      Date.now() - AUDIT_KEEP_MS,
      limit,
    );
    return rows.toArray().map((r) => ({ id: String(r.id), at: r.at, ...(JSON.parse(r.record) as AuditRecord) }));
  }

  /**
   * A lock object of this namespace asks to open one more wait socket, having
   * `count` open with it (its handshakes in flight included): yes while the
   * namespace's open sockets, as its lock objects last told, stay within
   * `cap`, and each of `openIds` has room for a new socket (then `count` is
   * kept as that object's, and the room taken); no, with the total, when the
   * cap is met; no, with `openRetryMs`, over the rate of new sockets
   * (socketOpens.ts); no, with `floodUntil`, while one of the client's ids is
   * refused for a flood (src/admission/floodPenalties.ts). A no keeps nothing.
   */
  reserveSocket(
    object: string,
    count: number,
    cap: number,
    clientIds: string[] = [],
    openIds: string[] = [],
  ): { ok: boolean; total: number; floodUntil?: number; openRetryMs?: number } {
    const now = Date.now();
    const floodUntil = this.floodUntil(clientIds, now);
    if (floodUntil !== undefined) return { ok: false, total: 0, floodUntil };
    const others = this.sql
      .exec<{ n: number }>("SELECT coalesce(sum(count), 0) AS n FROM sockets WHERE object <> ? AND until > ?", object, now)
      .one().n;
    if (others + count > cap) return { ok: false, total: others + count - 1 };
    const openRetryMs = this.opens.take(openIds.slice(0, 4), openRateOf(this.env), now);
    if (openRetryMs > 0) return { ok: false, total: others + count - 1, openRetryMs };
    this.tellSockets(object, count);
    return { ok: true, total: others + count };
  }

  /** A lock object refused a socket for its flood: its client's ids are refused new sockets until `until`, in every isolate. */
  penalize(clientIds: string[], until: number): void {
    for (const client of clientIds.slice(0, 4)) {
      this.sql.exec(
        "INSERT INTO floods (client, until) VALUES (?, ?) ON CONFLICT (client) DO UPDATE SET until = max(until, excluded.until)",
        client,
        until,
      );
    }
    void this.pruneLater();
  }

  private floodUntil(clientIds: string[], now: number): number | undefined {
    let until: number | undefined;
    for (const client of clientIds.slice(0, 4)) {
      const row = this.sql.exec<{ until: number }>("SELECT until FROM floods WHERE client = ? AND until > ?", client, now).toArray()[0];
      if (row && row.until > (until ?? 0)) until = row.until;
    }
    return until;
  }

  /**
   * A lock object's open wait sockets now (its absolute count, so a lost
   * message is corrected by the next). A count not told again within
   * SOCKETS_TOLD_FOR_MS is forgotten: an object that went away with its
   * sockets no longer holds the namespace's room.
   */
  tellSockets(object: string, count: number): void {
    if (count <= 0) {
      this.sql.exec("DELETE FROM sockets WHERE object = ?", object);
      return;
    }
    this.sql.exec(
      "INSERT INTO sockets (object, count, until) VALUES (?, ?, ?) ON CONFLICT (object) DO UPDATE SET count = excluded.count, until = excluded.until",
      object,
      count,
      Date.now() + SOCKETS_TOLD_FOR_MS,
    );
    void this.pruneLater();
  }

  async alarm(): Promise<void> {
    const now = Date.now();
    this.sql.exec("DELETE FROM locks WHERE until <= ?", now);
    this.sql.exec("DELETE FROM audit WHERE at <= ?", now - AUDIT_KEEP_MS);
    this.sql.exec("DELETE FROM sockets WHERE until <= ?", now);
    this.sql.exec("DELETE FROM floods WHERE until <= ?", now);
    const left = this.sql
      .exec<{ n: number }>(
        "SELECT (SELECT count(*) FROM locks) + (SELECT count(*) FROM audit) + (SELECT count(*) FROM sockets) + (SELECT count(*) FROM floods) AS n",
      )
      .one().n;
    if (left > 0) await this.ctx.storage.setAlarm(now + PRUNE_EVERY_MS);
  }

  /** Entries past their time are dropped by the alarm, within PRUNE_EVERY_MS (reads skip them already). */
  private async pruneLater(): Promise<void> {
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + PRUNE_EVERY_MS);
  }
}
