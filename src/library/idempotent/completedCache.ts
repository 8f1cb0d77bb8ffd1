/** What a completed key's response is kept as (answerOnce's StoredResponse), as this cache sees it: opaque. */
type Stored = unknown;

/** The cache's bounds: at most this many responses, and this many bytes of them (their JSON). */
export interface CompletedCacheOptions {
  /** Default 1000. */
  entries?: number;
  /** Default 1 MiB. */
  bytes?: number;
}

/**
 * Completed keys' responses kept in this process (AWS Powertools' local cache): a replay of a key
 * this process saw complete is answered without a round trip to the store, while it is kept. Bounded
 * in entries and bytes, the least recently used going first; never longer than the key's retention.
 * Off unless asked for (`cache` of `idempotent()`): another process's failure or expiry of the key is
 * not seen here until the entry goes.
 */
export class CompletedCache {
  private readonly byKey = new Map<string, { fingerprint: string; stored: Stored; until: number; bytes: number }>();
  private bytes = 0;
  private readonly maxEntries: number;
  private readonly maxBytes: number;

  constructor(options: CompletedCacheOptions = {}) {
    this.maxEntries = Math.max(1, options.entries ?? 1000);
    this.maxBytes = Math.max(1, options.bytes ?? 1024 * 1024);
  }

  /** The response kept for this key and fingerprint (another fingerprint is the store's to answer: 422). */
  get(key: string, fingerprint: string): Stored | undefined {
    const entry = this.byKey.get(key);
    if (!entry) return undefined;
    if (entry.until <= Date.now()) {
      this.drop(key);
      return undefined;
    }
    if (entry.fingerprint !== fingerprint) return undefined;
    // Most recently used last.
    this.byKey.delete(key);
    this.byKey.set(key, entry);
    return entry.stored;
  }

  put(key: string, fingerprint: string, stored: Stored, keepMs: number): void {
    const bytes = JSON.stringify(stored).length;
    if (bytes > this.maxBytes) return;
    this.drop(key);
    this.byKey.set(key, { fingerprint, stored, until: Date.now() + keepMs, bytes });
    this.bytes += bytes;
    for (const oldest of this.byKey.keys()) {
      if (this.byKey.size <= this.maxEntries && this.bytes <= this.maxBytes) break;
      this.drop(oldest);
    }
  }

  private drop(key: string): void {
    const entry = this.byKey.get(key);
    if (!entry) return;
    this.byKey.delete(key);
    this.bytes -= entry.bytes;
  }
}
