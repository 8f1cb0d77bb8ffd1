/** How a waiter waits: an HTTP request held open (POST /wait), or a wait socket. */
export type WaitChannel = "http" | "socket";

/**
 * Every wait in progress in this lock object, over HTTP and on wait sockets:
 * one registry. Each wait can be withdrawn by its key (the Worker's waiterId
 * for an HTTP wait, the socket for a socket's), and the waits are counted
 * here, once, for the cap on waiters (socketCaps.ts).
 */
export class Waiters {
  private readonly byKey = new Map<string | WebSocket, { leave: AbortController; channel: WaitChannel }>();

  /** A wait begins: its signal fires when it is withdrawn. */
  join(key: string | WebSocket, channel: WaitChannel): AbortController {
    const leave = new AbortController();
    this.byKey.set(key, { leave, channel });
    return leave;
  }

  /** The wait ended (answered, or its client gone): no longer counted. */
  leave(key: string | WebSocket): void {
    this.byKey.delete(key);
  }

  /** The wait of this key, if one is in progress. */
  get(key: string | WebSocket): AbortController | undefined {
    return this.byKey.get(key)?.leave;
  }

  has(key: string | WebSocket): boolean {
    return this.byKey.has(key);
  }

  /** Its client hung up: the wait leaves the line now (it is counted until it has left: leave()). */
  withdraw(key: string | WebSocket): void {
    this.byKey.get(key)?.leave.abort();
  }

  /** Waits in progress, of one channel or all. */
  count(channel?: WaitChannel): number {
    if (!channel) return this.byKey.size;
    let n = 0;
    for (const w of this.byKey.values()) if (w.channel === channel) n++;
    return n;
  }
}
