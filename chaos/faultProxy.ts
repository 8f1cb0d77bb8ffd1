/**
 * An HTTP proxy in front of an Upstash gateway that can answer 5xx or answer
 * slowly: the gateway failing, without touching Redis. Each request is sent
 * on unless the mode says otherwise.
 */
import http from "node:http";
import { sleep } from "./time";

type ProxyMode = { kind: "pass" } | { kind: "error"; status: number } | { kind: "slow"; delayMs: number };

export interface FaultProxy {
  url: string;
  mode: ProxyMode;
  /** Requests answered with an error and answered slowly, so a fault can confirm it took effect. */
  counts: { error: number; slow: number };
  close(): Promise<void>;
}

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const proxy: FaultProxy = { url: "", mode: { kind: "pass" }, counts: { error: 0, slow: 0 }, close: async () => {} };
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const mode = proxy.mode;
    if (mode.kind === "error") {
      proxy.counts.error++;
      res.writeHead(mode.status, { "content-type": "application/json" }).end(JSON.stringify({ error: "chaos: the gateway fails" }));
      return;
    }
    if (mode.kind === "slow") {
      proxy.counts.slow++;
      await sleep(mode.delayMs);
    }
    const upstream = http.request(target + (req.url ?? "/"), { method: req.method, headers: req.headers, agent }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    upstream.end(Buffer.concat(chunks));
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as { port: number };
  proxy.url = `http://127.0.0.1:${port}`;
  proxy.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    agent.destroy();
  };
  return proxy;
}
