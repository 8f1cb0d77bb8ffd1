/**
 * Tokens remembered for a while, forgotten lazily (no timer per token, so
 * remembering does not keep a lock object from hibernating).
 */
export class RecentTokens {
  private readonly until = new Map<string, number>();

  constructor(private readonly keepMs: number) {}

  add(token: string): void {
    const now = Date.now();
    for (const [t, end] of this.until) if (end <= now) this.until.delete(t);
    this.until.set(token, now + this.keepMs);
  }

  has(token: string): boolean {
    const end = this.until.get(token);
    if (end === undefined) return false;
    if (end > Date.now()) return true;
    this.until.delete(token);
    return false;
  }

  delete(token: string): void {
    this.until.delete(token);
  }
}
