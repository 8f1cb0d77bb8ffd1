/**
 * The resource the lock guards, as a storage system that checks fences
 * would: it refuses a write whose fence is below the highest it has accepted
 * (a holder's own later writes, at the same fence, pass). It logs every write
 * so the checker can verify the accepted ones in order, independently.
 */
export interface Write {
  client: number;
  fence: number;
  at: number;
  accepted: boolean;
  /** Which resource took or refused it (resources.ts), when there are several: each is checked on its own order. */
  resource?: string;
}

export class FencedResource {
  private highest = 0;
  readonly log: Write[] = [];

  write(client: number, fence: number, at: number): boolean {
    const accepted = fence >= this.highest;
    if (accepted) this.highest = fence;
    this.log.push({ client, fence, at, accepted });
    return accepted;
  }
}
