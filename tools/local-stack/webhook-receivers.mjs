// Real HTTP receivers for expiry-notification tests: workerd tests create a
// receiver, give its URL as onExpire, and read back what arrived (headers and
// raw body, so the test verifies the signature itself). A receiver can be
// told to fail its first N deliveries, to exercise the room's retries.
import http from "node:http";

/**
 * @returns {Promise<{ url: string, close(): Promise<void> }>}
 * Routes: POST /receivers {"failFirst"?: n} -> {id, url}; POST /r/:id (a
 * delivery); GET /receivers/:id -> {deliveries: [{at, signature, body, answered}]}.
 */
export async function startWebhookReceivers() {
  /** @type {Map<string, { failFirst: number, deliveries: Array<{ at: number, signature: string | undefined, body: string, answered: number }> }>} */
  const receivers = new Map();
  let nextId = 1;
  let base = "";

  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = Buffer.concat(chunks).toString("utf8");
    const path = (req.url ?? "/").split("?")[0];
    const send = (/** @type {number} */ status, /** @type {unknown} */ json) =>
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(json));

    if (req.method === "POST" && path === "/receivers") {
      const id = `r${nextId++}`;
      const failFirst = Number(body ? (JSON.parse(body).failFirst ?? 0) : 0);
      receivers.set(id, { failFirst, deliveries: [] });
      return send(200, { id, url: `${base}/r/${id}` });
    }
    const delivery = /^\/r\/([^/]+)$/.exec(path);
    const receiver = delivery && receivers.get(delivery[1]);
    if (req.method === "POST" && receiver) {
      const answered = receiver.deliveries.length < receiver.failFirst ? 500 : 200;
      const signature = req.headers["x-lock-signature"];
      receiver.deliveries.push({ at: Date.now(), signature: Array.isArray(signature) ? signature[0] : signature, body, answered });
      return send(answered, { ok: answered === 200 });
    }
    const read = /^\/receivers\/([^/]+)$/.exec(path);
    const found = read && receivers.get(read[1]);
    if (req.method === "GET" && found) return send(200, { deliveries: found.deliveries });
    return send(404, { error: `no route ${req.method} ${path}` });
  });
  await new Promise((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", () => resolve(undefined)));
  const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
  base = `http://127.0.0.1:${port}`;
  return {
    url: base,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve(undefined));
        server.closeAllConnections();
      }),
  };
}
