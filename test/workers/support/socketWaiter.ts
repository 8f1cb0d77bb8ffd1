import { createExecutionContext } from "cloudflare:test";
import worker from "../../../src/worker";
import { envFor, KEY_A } from "./api";

/** A mutex wait socket of tenant-a opened through the Worker, inside workerd (Durable store): the socket and what it was sent. */
export async function socketWaiter(name: string, acquire: Record<string, unknown>) {
  const res = await worker.fetch(
    new Request(`http://holdfast.test/v1/locks/${name}/wait`, { headers: { upgrade: "websocket", authorization: `Bearer ${KEY_A}` } }),
    envFor("durable"),
    createExecutionContext(),
  );
  const ws = res.webSocket as WebSocket;
  ws.accept();
  const messages: any[] = [];
  ws.addEventListener("message", (e) => {
    messages.push(JSON.parse(String(e.data)));
  });
  ws.send(JSON.stringify({ type: "acquire", ...acquire }));
  return { ws, messages };
}
