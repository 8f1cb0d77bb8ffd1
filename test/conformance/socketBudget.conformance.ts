import { createExecutionContext } from "cloudflare:test";
import { expect, it } from "vitest";
import worker from "../../src/worker";
import { pollUntil } from "../support/pollUntil";
import { api, KEY_A, type StoreKind, uniqueName } from "../support/workers/api";

/**
 * A wait socket's messages are requests like any other: each counts against
 * its namespace's budget (the Workers Rate Limiting binding, which workerd's
 * test runtime simulates; bare workerd has none), and one over it is
 * answered 429 rate_limited on the socket, then a close.
 */
export function socketBudgetConformance(kind: StoreKind): void {
  it("a wait socket's messages count against the namespace's request budget: over it, 429 rate_limited on the socket and a close", async () => {
    const limited = api(kind, { RATE_LIMIT_TIERS: "tenant-a=low,*=off" });
    const name = uniqueName("socket-budget");
    const open = () =>
      worker.fetch(
        new Request(`http://holdfast.test/v1/locks/${name}/wait`, { headers: { upgrade: "websocket", authorization: `Bearer ${KEY_A}` } }),
        limited.env,
        createExecutionContext(),
      );
    // Another case (or this one on the other store) may have spent the window: the handshake waits for the next.
    const res = await pollUntil(open, (r) => r.status === 101, 15_000);
    const ws = res.webSocket as WebSocket;
    ws.accept();
    const messages: any[] = [];
    ws.addEventListener("message", (e) => {
      messages.push(JSON.parse(String(e.data)));
    });
    let closed = false;
    ws.addEventListener("close", () => {
      closed = true;
    });
    const next = async () => {
      await pollUntil(
        () => messages.length,
        (n) => n > 0,
        5000,
      );
      return messages.shift();
    };
    ws.send(JSON.stringify({ type: "acquire", ttlMs: 30_000, waitMs: 5000, keep: true }));
    const granted = await next();
    expect(granted.type).toBe("granted");
    ws.send(JSON.stringify({ type: "ack", token: granted.grant.token }));
    expect(await next()).toEqual({ type: "held" });
    // Under the budget a heartbeat is answered.
    ws.send(JSON.stringify({ type: "heartbeat" }));
    expect((await next()).type).toBe("heartbeat");
    // Spend the budget over HTTP, then send a heartbeat; a window that ended meanwhile is spent again.
    let answer: any;
    for (let round = 0; round < 5 && answer?.type !== "error"; round++) {
      for (let i = 0; i < 250; i++) if ((await limited.get(`/v1/locks/${name}`)).status === 429) break;
      ws.send(JSON.stringify({ type: "heartbeat" }));
      answer = await next();
    }
    expect(answer).toMatchObject({ type: "error", status: 429, error: "rate_limited", limit: "budget" });
    expect(answer.retryAfterMs).toBeGreaterThan(0);
    await pollUntil(() => closed, Boolean, 5000);
    // The refused message changed nothing: the lease is still the holder's.
    expect((await api(kind).get(`/v1/locks/${name}`)).body).toMatchObject({ held: true, fence: granted.grant.fence });
    expect((await api(kind).post(`/v1/locks/${name}/release`, { token: granted.grant.token })).status).toBe(200);
  });
}
