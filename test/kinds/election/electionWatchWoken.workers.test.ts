// An election watched at a position across its lock object's hibernation (Durable store): the last
// position each watcher was sent is kept with its socket (docs/API.md, "Watching a lock"), so the woken
// object pushes it only the changes after that one. workerd cannot hibernate an object on demand: the
// wake-up is stood in for by a second LockObject built on the same state, as in
// test/lockObject/hibernation.workers.test.ts.
import { createExecutionContext, env, runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import worker, { LockObject } from "../../../src/worker";
import { api, envFor, KEY_A, uniqueName } from "../../support/workers/api";
import { eventually } from "../../support/workers/lockObjectHelpers";

/** runInDurableObject, untyped: its inference on these stubs runs too deep for the compiler. */
const inObject = runInDurableObject as unknown as (stub: unknown, fn: (o: any, state: DurableObjectState) => unknown) => Promise<any>;

const electionObject = (name: string) => env.LOCK_OBJECT.get(env.LOCK_OBJECT.idFromName(`election:tenant-a:${name}`));

it("woken, the object pushes a watcher at a position only the changes after the last one it was sent", async () => {
  const { post } = api("durable");
  const name = uniqueName("el-watch-woken");
  const ref = { ns: "tenant-a", name };
  const a = (await post(`/v1/elections/${name}/campaign`, { value: "a", ttlMs: 30_000 })).body;
  const res = await worker.fetch(
    new Request(`http://holdfast.test/v1/elections/${name}/watch?since=0`, { headers: { upgrade: "websocket", authorization: `Bearer ${KEY_A}` } }),
    envFor("durable"),
    createExecutionContext(),
  );
  expect(res.status).toBe(101);
  const ws = res.webSocket as WebSocket;
  ws.accept();
  const changes: Array<{ position: number; value: string }> = [];
  ws.addEventListener("message", (e) => {
    const m = JSON.parse(String(e.data));
    if (m.type === "state") changes.push(...(m.changes ?? []));
  });
  ws.send(JSON.stringify({ type: "watch" }));
  const until = (position: number) =>
    eventually(
      () => changes.at(-1)?.position ?? 0,
      (p) => p >= position,
    );
  await until(1);
  await post(`/v1/elections/${name}/proclaim`, { token: a.token, value: "a2" });
  await until(2);

  const woken = await inObject(electionObject(name), (_o: unknown, state: DurableObjectState) => new LockObject(state, env as never));
  await inObject(electionObject(name), () => woken.run("election", "proclaim", [ref, { token: a.token, value: "a3" }]));
  await until(3);
  // Told once each: the woken object went on from position 2, not from the watch's since (0).
  expect(changes.map((c) => [c.position, c.value])).toEqual([
    [1, "a"],
    [2, "a2"],
    [3, "a3"],
  ]);
  ws.close();
});
