import net from "node:net";

/**
 * A real TCP proxy in front of the service, for what a client meets on a
 * real network: the service going away (the port closes, connections drop)
 * and an answer lost on the way back (the request reaches the service, its
 * response never reaches the client).
 */
export interface Proxy {
  url: string;
  /** The next `n` connections forward their request but are cut before any response byte reaches the client. */
  dropResponses(n: number): void;
  /** Stops listening and cuts every open connection: the port is closed. */
  close(): Promise<void>;
}

export async function startProxy(target: string): Promise<Proxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<net.Socket>();
  let toDrop = 0;
  const server = net.createServer((client) => {
    const drop = toDrop > 0;
    if (drop) toDrop -= 1;
    const upstream = net.connect(Number(port), hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => s.destroy());
    }
    client.pipe(upstream);
    upstream.on("data", (chunk) => {
      if (drop) {
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    upstream.on("end", () => client.end());
    client.on("close", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    dropResponses: (n) => {
      toDrop = n;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
