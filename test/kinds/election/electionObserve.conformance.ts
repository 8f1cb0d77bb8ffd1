import { createExecutionContext } from "cloudflare:test";
import { expect, it } from "vitest";
import worker from "../../../src/worker";
import { envFor, KEY_A, type StoreKind, uniqueName } from "../../support/workers/api.js";
import { eventually } from "../../support/workers/lockObjectHelpers.js";
import { electionApi } from "./electionApi.js";

type Change = { position: number; term: number; value: string; at: number };
type Push = { state: Record<string, any>; changes?: Change[]; missed?: true };

/**
 * Observing an election over its watch socket alone (docs/API.md, "Elections", Observing): a watch
 * opened at a position (GET /v1/elections/{name}/watch?since=N) is pushed, with each state, the
 * changes after the last position it was sent (the first time, those after N), in order; where the
 * history no longer holds N + 1, the newest change alone with `missed`. A bad position is refused
 * before any socket, and changes nothing. Written once, run on both stores.
 */
export function electionObserveConformance(kind: StoreKind) {
  const { post, get, path, leader, untilWaiters } = electionApi(kind);

  /** GET .../watch?<query> as a WebSocket of tenant-a: its handshake's answer. */
  const handshake = (name: string, query: string) =>
    worker.fetch(
      new Request(`http://holdfast.test${path(name, "watch")}${query}`, { headers: { upgrade: "websocket", authorization: `Bearer ${KEY_A}` } }),
      envFor(kind),
      createExecutionContext(),
    );

  /** A watch of the election opened with `query` and started: what it was pushed, and every change those pushes carried, in order. */
  async function watchAt(name: string, query: string) {
    const res = await handshake(name, query);
    expect(res.status, await (res.status === 101 ? "" : res.text())).toBe(101);
    const ws = res.webSocket as WebSocket;
    ws.accept();
    const pushes: Push[] = [];
    ws.addEventListener("message", (e) => {
      const m = JSON.parse(String(e.data));
      if (m.type === "state") pushes.push(m);
    });
    ws.send(JSON.stringify({ type: "watch" }));
    const changes = () => pushes.flatMap((p) => p.changes ?? []);
    /** Waits until the pushes carried the change at `position`. */
    const until = (position: number) =>
      eventually(
        () => changes().at(-1)?.position ?? 0,
        (p) => p >= position,
      );
    /** Waits until it was pushed `n` states. */
    const pushed = (n: number) =>
      eventually(
        () => pushes.length,
        (k) => k >= n,
      );
    return { ws, pushes, changes, until, pushed };
  }

  const positionsAndValues = (changes: Change[]) => changes.map((c) => [c.position, c.term, c.value]);

  it("a watch at a position is pushed the changes after it, then every later change once, in order, as every other such watch is", async () => {
    const name = uniqueName("el-watch-since");
    const a = (await post(path(name, "campaign"), { value: "a", ttlMs: 30_000 })).body;
    await post(path(name, "proclaim"), { token: a.token, value: "a2" });
    await post(path(name, "proclaim"), { token: a.token, value: "a3" });
    const w = await watchAt(name, "?since=1");
    const from0 = await watchAt(name, "?since=0");
    await w.until(3);
    // The first push: the state and the changes after 1.
    expect(w.pushes[0].state).toMatchObject({ name, value: "a3", term: a.fence, position: 3 });
    expect(positionsAndValues(w.pushes[0].changes ?? [])).toEqual([
      [2, a.fence, "a2"],
      [3, a.fence, "a3"],
    ]);
    const b = post(path(name, "campaign"), { value: "b", ttlMs: 30_000, waitMs: 20_000 });
    await untilWaiters(name, 1);
    await post(path(name, "resign"), { token: a.token });
    const bLeads = (await b).body;
    await post(path(name, "proclaim"), { token: bLeads.token, value: "b2" });
    await w.until(5);
    await from0.until(5);
    const told = [
      [2, a.fence, "a2"],
      [3, a.fence, "a3"],
      [4, bLeads.fence, "b"],
      [5, bLeads.fence, "b2"],
    ];
    expect(positionsAndValues(w.changes())).toEqual(told);
    expect(positionsAndValues(from0.changes())).toEqual([[1, a.fence, "a"], ...told]);
    expect(w.pushes.every((p) => p.missed === undefined)).toBe(true);
    // Terms never go back along what a watch is told.
    const terms = w.changes().map((c) => c.term);
    expect(terms).toEqual([...terms].sort((x, y) => x - y));
    w.ws.close();
    from0.ws.close();
    await post(path(name, "resign"), { token: bLeads.token });
  });

  it("a watch at the last position is pushed the state with no change, then the changes as they come", async () => {
    const name = uniqueName("el-watch-last");
    const a = (await post(path(name, "campaign"), { value: "a", ttlMs: 30_000 })).body;
    const w = await watchAt(name, "?since=1");
    await w.pushed(1);
    expect(w.pushes[0]).toMatchObject({ state: { value: "a", position: 1 }, changes: [] });
    await post(path(name, "proclaim"), { token: a.token, value: "a2" });
    await w.until(2);
    expect(positionsAndValues(w.changes())).toEqual([[2, a.fence, "a2"]]);
    w.ws.close();
    await post(path(name, "resign"), { token: a.token });
  });

  it("a watch at a position the history no longer holds is pushed the newest change alone, with missed", async () => {
    const name = uniqueName("el-watch-missed");
    const a = (await post(path(name, "campaign"), { value: "v0", ttlMs: 30_000 })).body;
    for (let i = 1; i < 70; i++) await post(path(name, "proclaim"), { token: a.token, value: `v${i}` });
    const w = await watchAt(name, "?since=5");
    await w.until(70);
    expect(w.pushes[0].missed).toBe(true);
    expect(positionsAndValues(w.pushes[0].changes ?? [])).toEqual([[70, a.fence, "v69"]]);
    // From there on it has missed nothing.
    await post(path(name, "proclaim"), { token: a.token, value: "v70" });
    await w.until(71);
    expect(w.pushes.at(-1)?.missed).toBeUndefined();
    expect(positionsAndValues(w.changes())).toEqual([
      [70, a.fence, "v69"],
      [71, a.fence, "v70"],
    ]);
    w.ws.close();
    await post(path(name, "resign"), { token: a.token });
  });

  it("a watch at a bad position is refused 400 invalid_position before any socket, naming it, and nothing changes", async () => {
    const name = uniqueName("el-watch-bad");
    const a = (await post(path(name, "campaign"), { value: "a", ttlMs: 30_000 })).body;
    await post(path(name, "proclaim"), { token: a.token, value: "a2" });
    const future = await handshake(name, "?since=3");
    expect(future.status).toBe(400);
    expect(future.webSocket).toBeNull();
    const body = (await future.json()) as { error: string; message: string };
    expect(body.error).toBe("invalid_position");
    expect(body.message).toContain("beyond the last position, 2");
    for (const since of ["-1", "1.5", "two", "", "99999999999999999"]) {
      const res = await handshake(name, `?since=${encodeURIComponent(since)}`);
      expect(res.status, since).toBe(400);
      const refused = (await res.json()) as { error: string; message: string };
      expect(refused.error, since).toBe("invalid_position");
      expect(refused.message, since).toContain(JSON.stringify(since));
    }
    // Nothing changed: the leader and its history are as they were, and a watch at the last position opens.
    expect(await leader(name)).toMatchObject({ value: "a2", term: a.fence, position: 2 });
    expect((await get(`${path(name, "changes")}?since=0`)).body.changes).toHaveLength(2);
    const w = await watchAt(name, "?since=2");
    await w.pushed(1);
    w.ws.close();
    await post(path(name, "resign"), { token: a.token });
  });

  it("a watch without a position is pushed the state alone, as every kind's; a mutex's watch reads no position", async () => {
    const name = uniqueName("el-watch-plain");
    const a = (await post(path(name, "campaign"), { value: "a", ttlMs: 30_000 })).body;
    const w = await watchAt(name, "");
    await w.pushed(1);
    expect(w.pushes[0]).toEqual({ type: "state", state: expect.objectContaining({ value: "a", position: 1 }) });
    w.ws.close();
    const mutexWatch = await worker.fetch(
      new Request(`http://holdfast.test/v1/locks/${name}/watch?since=nonsense`, {
        headers: { upgrade: "websocket", authorization: `Bearer ${KEY_A}` },
      }),
      envFor(kind),
      createExecutionContext(),
    );
    expect(mutexWatch.status).toBe(101);
    (mutexWatch.webSocket as WebSocket).accept();
    (mutexWatch.webSocket as WebSocket).close();
    await post(path(name, "resign"), { token: a.token });
  });
}
