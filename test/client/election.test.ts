// holdfast/client's campaign and observe (docs/API.md, "Elections"): the Worker served by workerd over real
// TCP, on both stores, the client's real WebSocket; the observer reaches the service through a real TCP proxy
// that can cut it off for a while, as a network break does.
import http from "node:http";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ElectionChange, HoldfastClient, LeaseLostError, LeaseReleasedError } from "../../src/client/index";
import { type Stores, startForKeys, stopAll, until } from "../support/workerServers";

const KEY = "election-client-key-123456";
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

let servers: Stores;

beforeAll(async () => {
  servers = await startForKeys({ electors: KEY });
}, 120_000);

afterAll(async () => {
  await stopAll(servers ?? {});
});

/** A TCP proxy to `target` whose connections can be cut, and new ones refused, until it is let through again. */
async function cuttableProxy(target: string) {
  const { hostname, port } = new URL(target);
  const sockets = new Set<net.Socket>();
  let cut = false;
  const server = net.createServer((client) => {
    if (cut) return void client.destroy();
    const upstream = net.connect(Number(port), hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => s.destroy());
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    cut() {
      cut = true;
      for (const s of sockets) s.destroy();
    },
    letThrough() {
      cut = false;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A port on 127.0.0.1 that nobody listens on: a connection to it is refused. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A stand-in service whose every answer is 503 store_unavailable. */
async function answering503() {
  let answered = 0;
  const server = http.createServer((_req, res) => {
    answered++;
    res.writeHead(503, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: "store_unavailable", message: "the store did not answer", outcome: "not_applied" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    answered: () => answered,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Takes what an observer tells, in the background, into a list. */
function collect(changes: AsyncIterable<ElectionChange>) {
  const seen: ElectionChange[] = [];
  void (async () => {
    for await (const c of changes) seen.push(c);
  })().catch(() => undefined);
  return seen;
}

describe.each(["redis", "durable"] as const)("client.campaign and client.observe (%s store)", (store) => {
  it("one leads, the next waits in line and leads at once on resign; proclaim changes the value in the term", async () => {
    const a = new HoldfastClient({ baseUrl: servers[store].url, apiKey: KEY });
    const b = new HoldfastClient({ baseUrl: servers[store].url, apiKey: KEY });
    const name = unique("sdk-elect");
    const first = await a.campaign(name, { value: "a", ttlMs: 10_000 });
    const second = b.campaign(name, { value: "b", ttlMs: 10_000, waitMs: 20_000 });
    await until(
      () => a.inspect("election", name),
      (s) => s.waiters === 1,
    );
    expect(await first.proclaim("a, again")).toMatchObject({ term: first.term });
    expect(await a.inspect("election", name)).toMatchObject({ value: "a, again", term: first.term });
    await first.resign();
    expect(first.signal.reason).toBeInstanceOf(LeaseReleasedError);
    const next = await second;
    expect(next.term).toBeGreaterThan(first.term);
    expect(await b.inspect("election", name)).toMatchObject({ value: "b", term: next.term });
    await expect(first.proclaim("not mine any more")).rejects.toMatchObject({ code: "lease_lost" });
    await next.resign();
  });

  it("the leadership's signal aborts when its term is lost (resigned by another process with its token)", async () => {
    const client = new HoldfastClient({ baseUrl: servers[store].url, apiKey: KEY });
    const name = unique("sdk-lost");
    const leadership = await client.campaign(name, { value: "a", ttlMs: 1500 });
    // Another process holding the handle resigns it: this one's next heartbeat finds the term gone.
    await new HoldfastClient({ baseUrl: servers[store].url, apiKey: KEY }).release({ kind: "election", name, token: leadership.lease.token });
    await until(
      () => leadership.signal.aborted,
      (aborted) => aborted,
    );
    expect(leadership.signal.reason).toBeInstanceOf(LeaseLostError);
  });

  it("an observer cut off for 2 s during three changes is told all three on reconnect, in order", async () => {
    const proxy = await cuttableProxy(servers[store].url);
    const leaders = new HoldfastClient({ baseUrl: servers[store].url, apiKey: KEY });
    const name = unique("sdk-observe");
    const a = await leaders.campaign(name, { value: "a", ttlMs: 20_000 });
    const b = leaders.campaign(name, { value: "b", ttlMs: 20_000, waitMs: 30_000 });
    const observer = new HoldfastClient({ baseUrl: proxy.url, apiKey: KEY }).observe(name);
    const seen = collect(observer);
    await until(
      () => seen.length,
      (n) => n === 1,
    );
    expect(seen[0]).toMatchObject({ position: 1, term: a.term, value: "a", missed: false });
    await until(
      () => leaders.inspect("election", name),
      (s) => s.waiters === 1,
    );

    proxy.cut();
    await a.proclaim("a2");
    await a.resign();
    const bLeads = await b;
    await bLeads.proclaim("b2");
    await new Promise((r) => setTimeout(r, 2000)); // the break lasts 2 s, whatever the changes took
    expect(seen).toHaveLength(1);
    proxy.letThrough();

    await until(
      () => seen.length,
      (n) => n >= 4,
    );
    expect(seen.map((c) => [c.position, c.term, c.value, c.missed])).toEqual([
      [1, a.term, "a", false],
      [2, a.term, "a2", false],
      [3, bLeads.term, "b", false],
      [4, bLeads.term, "b2", false],
    ]);
    observer.close();
    await bLeads.resign();
    await proxy.close();
  });

  it("an observer whose socket does not open, and whose read of why finds the service unreachable or its store away, tries again and does not end", async () => {
    const proxy = await cuttableProxy(servers[store].url);
    const client = new HoldfastClient({ baseUrl: servers[store].url, apiKey: KEY });
    const name = unique("sdk-reread");
    const leader = await client.campaign(name, { value: "a", ttlMs: 20_000 });
    // Its socket cannot reach the service (the proxy refuses it), so it asks over HTTP why: its first
    // read goes to a port nobody listens on (refused, as while the Worker restarts); then, for 1 s (past
    // a read's deadline of 200 ms, retries included), to a stand-in answering 503 store_unavailable (a
    // store that does not answer, which this test cannot cause in the Worker under test).
    const nobody = await closedPort();
    const storeAway = await answering503();
    let refused = 0;
    let awayUntil = Number.POSITIVE_INFINITY;
    proxy.cut();
    const observer = new HoldfastClient({
      baseUrl: proxy.url,
      apiKey: KEY,
      timeoutMs: 200,
      fetch: (input, init) => {
        const url = String(input);
        if (!url.includes("/changes?")) return fetch(input, init);
        if (refused++ === 0) return fetch(url.replace(proxy.url, `http://127.0.0.1:${nobody}`), init);
        if (awayUntil === Number.POSITIVE_INFINITY) awayUntil = Date.now() + 1000;
        return fetch(url.replace(proxy.url, Date.now() < awayUntil ? storeAway.url : servers[store].url), init);
      },
    }).observe(name, { since: 0 });
    const seen = collect(observer);
    await until(
      () => storeAway.answered(),
      (n) => n > 1,
    );
    await leader.proclaim("a2");
    proxy.letThrough();
    await until(
      () => seen.length,
      (n) => n >= 2,
    );
    expect(seen.map((c) => [c.position, c.value, c.missed])).toEqual([
      [1, "a", false],
      [2, "a2", false],
    ]);
    observer.close();
    await leader.resign();
    await storeAway.close();
    await proxy.close();
  });

  it("an observer asked to resume after a position the election has not reached ends with 400 invalid_position", async () => {
    const client = new HoldfastClient({ baseUrl: servers[store].url, apiKey: KEY });
    const name = unique("sdk-future");
    const leader = await client.campaign(name, { value: "a", ttlMs: 20_000 });
    const observer = client.observe(name, { since: 5 });
    const ended = (async () => {
      for await (const _ of observer) {
        // nothing is told
      }
    })();
    await expect(ended).rejects.toMatchObject({ code: "invalid_position", status: 400 });
    await leader.resign();
  });

  it("an observer that starts after more changes than the history keeps is told the newest with missed", async () => {
    const client = new HoldfastClient({ baseUrl: servers[store].url, apiKey: KEY });
    const name = unique("sdk-missed");
    const leader = await client.campaign(name, { value: "v0", ttlMs: 20_000 });
    for (let i = 1; i < 70; i++) await leader.proclaim(`v${i}`);
    const observer = client.observe(name, { since: 1 });
    const seen = collect(observer);
    await until(
      () => seen.length,
      (n) => n >= 1,
    );
    expect(seen[0]).toMatchObject({ position: 70, value: "v69", missed: true });
    observer.close();
    await leader.resign();
  });
});
