// A key's new sockets are limited in rate before any flood is seen (issue 53; docs/API.md, "Limits of a
// wait socket"): a bucket of SOCKET_OPEN_BURST handshakes (the default, 20) per key, per address
// (CF-Connecting-IP) and for all of a namespace's scoped tokens together, refilled at
// SOCKET_OPENS_PER_SECOND. Past it a handshake is answered 429 rate_limited, limit socket_rate, with
// retryAfterMs and Retry-After, before any socket. Against the Worker served by workerd over real TCP,
// on both stores; the refill is set to 2 a second here (the default is 10), so that what refills while
// 100 handshakes come in, on a busy machine, stays small beside the burst.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { SOCKET_OPEN_BURST_DEFAULT } from "../../../src/limits";
import { signClaims } from "../../../src/wire/scopedToken";
import { keyAsProtocol, SOCKET_PROTOCOL } from "../../../src/wire/socketProtocol";
import { handshakeAnswer } from "../../support/waitSocket";
import { type Stores, startOnBothStores, stopAll, until } from "../../support/workerServers";

const PER_SECOND = 2;
const KEYS = {
  burst: "rate-burst-key-1",
  calm: "rate-calm-key-1",
  issuer: "rate-issuer-key-1",
  addressA: "rate-address-a-1",
  addressB: "rate-address-b-1",
};
const SECRET = "rate-test-token-secret-0123456789abcdef";
const API_KEYS = [
  `rates:user:bursting=${KEYS.burst}`,
  `rates:user:calm=${KEYS.calm}`,
  `tokens=${KEYS.issuer}`,
  `addresses:user:a=${KEYS.addressA}`,
  `addresses:user:b=${KEYS.addressB}`,
].join(",");
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

let servers: Stores;
beforeAll(async () => {
  servers = await startOnBothStores(
    { API_KEYS, TOKEN_SECRETS: `tokens=${SECRET}`, SOCKET_OPENS_PER_SECOND: String(PER_SECOND) },
    { url: inject("upstashUrl"), token: inject("upstashToken") },
  );
}, 120_000);
afterAll(() => stopAll(servers));

/** A handshake with a key (as a browser sends it, a subprotocol), from an address when given. */
const handshake = (base: string, key: string, address?: string) =>
  handshakeAnswer(base, `/v1/locks/${unique("rate")}/wait`, {
    "Sec-WebSocket-Protocol": `${SOCKET_PROTOCOL}, ${keyAsProtocol(key)}`,
    ...(address ? { "CF-Connecting-IP": address } : {}),
  });

/** Sends these handshakes at once: their answers, and how long they took from the first sent to the last answered. */
async function atOnce(n: number, open: (i: number) => ReturnType<typeof handshake>) {
  const start = performance.now();
  const answers = await Promise.all(Array.from({ length: n }, (_, i) => open(i)));
  return { answers, opened: answers.filter((a) => a.status === 101).length, seconds: (performance.now() - start) / 1000 };
}

/** At most the burst, and what refilled while the handshakes came in. */
const mostAdmitted = (seconds: number) => SOCKET_OPEN_BURST_DEFAULT + Math.ceil(seconds * PER_SECOND);

// The two stores are two Workers with nothing shared: their cases run at once.
describe.concurrent("both stores", () => {
  for (const store of ["redis", "durable"] as const) {
    describe(`${store} store`, () => {
      const base = () => servers[store].url;

      it(`100 handshakes at once from one key: at most its burst (${SOCKET_OPEN_BURST_DEFAULT}) open, the rest are answered 429 socket_rate with when to retry; another key of the namespace is not held back, and the key opens again once its bucket refilled`, async () => {
        const { answers, opened, seconds } = await atOnce(100, () => handshake(base(), KEYS.burst));
        expect(opened).toBeGreaterThan(0);
        expect(opened).toBeLessThanOrEqual(mostAdmitted(seconds));
        const refused = answers.filter((a) => a.status !== 101);
        expect(refused.length).toBe(100 - opened);
        for (const r of refused) {
          expect(r.status).toBe(429);
          expect(r.body).toMatchObject({ error: "rate_limited", limit: "socket_rate" });
          expect(r.body.retryAfterMs).toBeGreaterThan(0);
          expect(r.body.retryAfterMs).toBeLessThanOrEqual(1000 / PER_SECOND);
          expect(r.headers).toMatch(/^retry-after: 1$/im);
        }
        // Another key of the same namespace has a bucket of its own.
        expect((await handshake(base(), KEYS.calm)).status).toBe(101);
        // The spent key opens again once a token has come back (about 1 / PER_SECOND s).
        await until(
          () => handshake(base(), KEYS.burst),
          (a) => a.status === 101,
          20_000,
        );
      });

      it("scoped tokens of one namespace, each signed offline with its own prefix, count as one key: 40 at once open no more than the burst; the namespace's key is not held back", async () => {
        const expiresAt = Date.now() + 10 * 60_000;
        const tokens = await Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            signClaims(SECRET, { namespace: "tokens", prefix: `rate-${store}-${i}`, operations: ["acquire", "wait"], expiresAt }),
          ),
        );
        const { answers, opened, seconds } = await atOnce(40, (i) =>
          handshakeAnswer(base(), `/v1/locks/rate-${store}-${i}-lock/wait`, {
            "Sec-WebSocket-Protocol": `${SOCKET_PROTOCOL}, ${keyAsProtocol(tokens[i])}`,
          }),
        );
        expect(opened).toBeGreaterThan(0);
        expect(opened).toBeLessThanOrEqual(mostAdmitted(seconds));
        expect(answers.filter((a) => a.status === 429 && a.body?.limit === "socket_rate").length).toBe(40 - opened);
        expect((await handshake(base(), KEYS.issuer)).status).toBe(101);
      });

      it("an address (CF-Connecting-IP, where the platform sets it) has a bucket over all its keys: once one key spent it, another key from that address is refused and the same key from another address opens", async () => {
        const here = `198.51.100.${store === "redis" ? 1 : 2}`;
        const elsewhere = `203.0.113.${store === "redis" ? 1 : 2}`;
        const { opened } = await atOnce(2 * SOCKET_OPEN_BURST_DEFAULT, () => handshake(base(), KEYS.addressA, here));
        expect(opened).toBeLessThan(2 * SOCKET_OPEN_BURST_DEFAULT);
        // Right after, the other key from that address: its own key bucket is full, the address's is spent (five at
        // once, so that one token refilled meanwhile on a slow machine cannot let them all through).
        const sameAddress = await atOnce(5, () => handshake(base(), KEYS.addressB, here));
        expect(sameAddress.opened).toBeLessThan(5);
        expect(sameAddress.answers.find((a) => a.status !== 101)?.body).toMatchObject({ error: "rate_limited", limit: "socket_rate" });
        expect((await handshake(base(), KEYS.addressB, elsewhere)).status).toBe(101);
      });
    });
  }
});
