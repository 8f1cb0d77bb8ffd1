// A kept socket whose answers make no sense (not JSON, or out of turn) fails the message waiting on it, so the
// lease goes on over HTTP (lease.ts), rather than leaving its heartbeat or release hanging for ever. holdfast's
// service never answers so (test/client/keptSocket.test.ts runs the real one); a proxy that mangles frames
// would. That cannot be caused against the real service, so a stand-in socket answers here, and says nothing else.
import { describe, expect, it } from "vitest";
import { KeptSocket, KeptSocketBrokenError } from "../../src/client/keptSocket";

/** Just what KeptSocket uses of a WebSocket: the answers are handed in by the test. */
class StandInSocket {
  onmessage: ((event: { data: string }) => void) | null = null;
  onclose: (() => void) | null = null;
  onerror: (() => void) | null = null;
  sent: string[] = [];
  closed = false;
  send(data: string) {
    this.sent.push(data);
  }
  close() {
    this.closed = true;
  }
  answer(data: string) {
    this.onmessage?.({ data });
  }
}

const keptOn = (ws: StandInSocket) => new KeptSocket(ws as unknown as WebSocket, "/v1/locks/x/wait");
const later = () => Date.now() + 60_000;

describe("a kept socket's nonsense answers", () => {
  it("an answer that is not JSON fails the heartbeat waiting on it as broken, and the socket is closed", async () => {
    const ws = new StandInSocket();
    const kept = keptOn(ws);
    const beat = kept.heartbeat(10_000, later());
    ws.answer("<html>502 Bad Gateway</html>");
    await expect(beat).rejects.toBeInstanceOf(KeptSocketBrokenError);
    expect(kept.open).toBe(false);
    expect(ws.closed).toBe(true);
  }, 2000);

  it("an answer out of turn fails the release waiting on it as broken", async () => {
    const ws = new StandInSocket();
    const kept = keptOn(ws);
    const release = kept.release(later());
    ws.answer('{"type":"heartbeat","expiresAt":1,"ttlMs":1,"fence":1}');
    await expect(release).rejects.toBeInstanceOf(KeptSocketBrokenError);
    expect(kept.open).toBe(false);
  }, 2000);
});
