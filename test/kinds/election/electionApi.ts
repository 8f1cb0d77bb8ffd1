import { createExecutionContext } from "cloudflare:test";
import worker from "../../../src/worker";
import { api, envFor, KEY_A, type StoreKind } from "../../support/workers/api.js";
import { eventually } from "../../support/workers/lockObjectHelpers.js";

/** The election API as its conformance cases call it: requests, an election's paths, its line's length, a campaign on a wait socket. */
export function electionApi(kind: StoreKind) {
  const { post, get } = api(kind);
  const path = (name: string, op = "") => `/v1/elections/${name}${op ? `/${op}` : ""}`;
  const leader = async (name: string) => (await get(path(name))).body;
  const untilWaiters = (name: string, n: number) =>
    eventually(
      async () => (await leader(name)).waiters as number,
      (w) => w === n,
    );
  /** A campaign on a wait socket of tenant-a: the socket, what it was sent, and a wait for a message of a type. */
  async function socketCampaign(name: string, body: Record<string, unknown>) {
    const res = await worker.fetch(
      new Request(`http://holdfast.test${path(name, "wait")}`, { headers: { upgrade: "websocket", authorization: `Bearer ${KEY_A}` } }),
      envFor(kind),
      createExecutionContext(),
    );
    const ws = res.webSocket as WebSocket;
    ws.accept();
    const messages: any[] = [];
    ws.addEventListener("message", (e) => {
      messages.push(JSON.parse(String(e.data)));
    });
    ws.send(JSON.stringify({ type: "acquire", ...body }));
    const next = (type: string) =>
      eventually(
        () => messages.find((m) => m.type === type),
        (m) => m !== undefined,
      );
    return { ws, messages, next };
  }
  return { post, get, path, leader, untilWaiters, socketCampaign };
}
