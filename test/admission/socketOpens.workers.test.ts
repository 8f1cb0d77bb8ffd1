import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SOCKET_OPEN_BURST_DEFAULT, SOCKET_OPENS_PER_SECOND_DEFAULT } from "../../src/limits";
import { keyAsProtocol, SOCKET_PROTOCOL } from "../../src/wire/socketProtocol";
import { unreachableLockObjects } from "../support/workers/unreachableLockObjects";
import { api, uniqueName } from "../support/workers/api";

/**
 * The rate of new sockets (src/admission/socketOpens.ts; issue 53) is
 * counted twice, and each count holds on its own: the Worker's, in its
 * isolate, before a handshake goes anywhere; and the namespace object's,
 * which every handshake its lock objects admit passes through, so the rate
 * holds over every isolate of a deployment. test/lockObject/sockets/
 * socketRate.test.ts shows both together from a client's side.
 *
 * The unreachable lock-object binding is a fake: lock objects that fail
 * every call cannot be caused for real inside the test runtime.
 */

describe("the rate of new sockets", () => {
  it("the Worker refuses a key's handshakes past its burst itself, before any lock object: with every lock object unreachable, those are still answered 429 socket_rate", async () => {
    const key = `rate-worker-${uniqueName("key")}`;
    const { call } = api("durable", { API_KEYS: `${uniqueName("rate-worker")}=${key}`, LOCK_OBJECT: unreachableLockObjects });
    const answers = await Promise.all(
      Array.from({ length: SOCKET_OPEN_BURST_DEFAULT + 5 }, () =>
        call("GET", `/v1/locks/${uniqueName("rate")}/wait`, undefined, {
          key: null,
          headers: { upgrade: "websocket", "sec-websocket-protocol": `${SOCKET_PROTOCOL}, ${keyAsProtocol(key)}` },
        }),
      ),
    );
    // Within the burst they reach the (unreachable) lock object and fail there; past it the Worker answers alone.
    const refused = answers.filter((a) => a.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const r of refused) expect(r.body).toMatchObject({ error: "rate_limited", limit: "socket_rate" });
    expect(answers.filter((a) => a.status !== 429).length).toBeLessThanOrEqual(SOCKET_OPEN_BURST_DEFAULT + 1);
  });

  it("the namespace object takes each admitted socket from its ids' buckets: past the burst it answers openRetryMs and counts nothing; other ids and other namespaces are not held back", async () => {
    const ns = uniqueName("rate-ns");
    const object = env.NAMESPACE_OBJECT.get(env.NAMESPACE_OBJECT.idFromName(ns));
    const ids = [`key:${ns}/bursting`];
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => object.reserveSocket(`mutex:lock-${i}`, 1, 10_000, [], ids)));
    const seconds = (performance.now() - started) / 1000;
    const admitted = answers.filter((a) => a.ok).length;
    // The burst, and what refilled (10 a second) while the calls came in.
    expect(admitted).toBeGreaterThanOrEqual(SOCKET_OPEN_BURST_DEFAULT);
    expect(admitted).toBeLessThanOrEqual(SOCKET_OPEN_BURST_DEFAULT + Math.ceil(seconds * SOCKET_OPENS_PER_SECOND_DEFAULT));
    const refused = answers.find((a) => !a.ok);
    expect(refused?.openRetryMs).toBeGreaterThan(0);
    // A refusal counts no socket: the namespace's total is the admitted ones'.
    expect((await object.reserveSocket("mutex:other", 1, 10_000, [], [`key:${ns}/calm`])).total).toBe(admitted + 1);
    const elsewhere = env.NAMESPACE_OBJECT.get(env.NAMESPACE_OBJECT.idFromName(uniqueName("rate-other")));
    expect((await elsewhere.reserveSocket("mutex:lock", 1, 10_000, [], ids)).ok).toBe(true);
  });
});
