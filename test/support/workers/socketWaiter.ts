import { createExecutionContext } from "cloudflare:test";
import worker from "../../../src/worker";
import { envFor, KEY_A } from "./api";

/**
 * A mutex wait socket of tenant-a opened through the Worker, inside workerd (Durable store), accepted by
 * its lock object but not yet in line: the socket, what it was sent, and its acquire (which puts it in line).
 */
export async function openWaitSocket(name: string) {
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
  const acquire = (body: Record<string, unknown>) => ws.send(JSON.stringify({ type: "acquire", ...body }));
  return { ws, messages, acquire };
}

/** A mutex wait socket of tenant-a that has sent its acquire (openWaitSocket). */
export async function socketWaiter(name: string, acquire: Record<string, unknown>) {
  const s = await openWaitSocket(name);
  s.acquire(acquire);
  return s;
}
