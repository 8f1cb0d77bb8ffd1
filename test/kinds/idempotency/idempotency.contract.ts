import { expect, it } from "vitest";
import type { IdempotencyBeginInput } from "../../../src/kinds/idempotency/types";
import {
  fenceIssuedBetween,
  freshRef,
  type NewStore,
  remainingUntil,
  requestId,
  SHORT_TTL_MS,
  timeBetween,
  timed,
  tokenOf,
  untilStore,
} from "../../contract/support";

/**
 * Idempotency keys at the store boundary (IdempotencyOps:
 * lua/idempotency/*.lua against durableIdempotency.ts): begin while absent,
 * started, completed; fingerprints; heartbeat, complete, fail, a lapsed
 * start; inspect's three shapes; watch; retried requests.
 */
export function idempotencyContract(newStore: NewStore): void {
  const begin = (token: string, ttlMs = 5000, extra: Partial<IdempotencyBeginInput> = {}): IdempotencyBeginInput => ({
    token,
    ttlMs,
    retainMs: 60_000,
    requestId: requestId(),
    ...extra,
  });
  const finish = (token: string, response: unknown) => ({ token, responseJson: JSON.stringify(response), requestId: requestId() });

  it("the first begin starts the work; another begin is in progress, told the owner and its deadline; inspect shows the start", async () => {
    const store = newStore();
    const ref = freshRef("idem-begin");
    const a = tokenOf("a");
    const first = await timed(() => store.idempotency.begin(ref, begin(a, 3000, { holder: "worker-1" })));
    expect(first.value).toEqual({
      status: "started",
      token: a,
      fence: fenceIssuedBetween(first.t0, first.t1),
      ttlMs: 3000,
      expiresAt: timeBetween(first.t0, first.t1, 3000),
    });
    if (first.value.status !== "started") return;
    const { fence, expiresAt } = first.value;
    const busy = await timed(() => store.idempotency.begin(ref, begin(tokenOf("b"))));
    expect(busy.value).toEqual({
      status: "in_progress",
      retryAfterMs: remainingUntil(expiresAt, busy.t0, busy.t1),
      expiresAt,
      holder: "worker-1",
    });
    expect(await store.idempotency.inspect(ref)).toEqual({ state: "started", fence, expiresAt, holder: "worker-1" });
  });

  it("complete keeps the response: later begins get it, inspect shows it, the watch reads ended; the owner's token is lost after", async () => {
    const store = newStore();
    const ref = freshRef("idem-complete");
    const a = tokenOf("a");
    const started = await store.idempotency.begin(ref, begin(a, 5000));
    if (started.status !== "started") throw new Error(`not started: ${JSON.stringify(started)}`);
    const response = { status: 201, body: { id: 7, tags: ["x", "y"] } };
    const done = await timed(() => store.idempotency.complete(ref, finish(a, response)));
    const completedAt = done.value.status === "ok" ? done.value.completedAt : -1;
    // What each store adds is documented in types.ts: Redis says whether anyone waited, the Durable store until when it keeps the result.
    const extra = store.kind === "redis" ? { waited: false } : { keptUntil: completedAt + 60_000 };
    expect(done.value).toEqual({ status: "ok", completedAt: timeBetween(done.t0, done.t1), fence: started.fence, ...extra });

    expect(await store.idempotency.begin(ref, begin(tokenOf("b")))).toEqual({ status: "completed", response, completedAt, fence: started.fence });
    expect(await store.idempotency.inspect(ref)).toEqual({ state: "completed", fence: started.fence, completedAt, response });
    expect(await store.idempotency.watch(ref, { fence: started.fence })).toEqual({ state: "ended" });
    expect(await store.idempotency.complete(ref, finish(a, "again"))).toEqual({ status: "lost" });
    expect(await store.idempotency.heartbeat(ref, { token: a })).toEqual({ status: "lost" });
    expect(await store.idempotency.fail(ref, { token: a, requestId: requestId() })).toEqual({ status: "lost" });
  });

  it("a retried begin, complete or fail (same request id) gets the first answer", async () => {
    const store = newStore();
    const ref = freshRef("idem-retry");
    const first = begin(tokenOf("a"));
    const started = await store.idempotency.begin(ref, first);
    expect(await store.idempotency.begin(ref, { ...first, token: tokenOf("other") })).toEqual(started);

    const failInput = { token: first.token, requestId: requestId() };
    const failed = await store.idempotency.fail(ref, failInput);
    expect(failed).toMatchObject({ status: "ok" });
    expect(await store.idempotency.fail(ref, failInput)).toEqual(failed);

    const b = tokenOf("b");
    await store.idempotency.begin(ref, begin(b));
    const completeInput = finish(b, [1, 2]);
    const done = await store.idempotency.complete(ref, completeInput);
    expect(await store.idempotency.complete(ref, completeInput)).toEqual(done);
  });

  it("fail gives the key up: inspect reads absent and the next begin starts anew with a larger fence", async () => {
    const store = newStore();
    const ref = freshRef("idem-fail");
    const a = tokenOf("a");
    const started = await store.idempotency.begin(ref, begin(a));
    if (started.status !== "started") throw new Error(`not started: ${JSON.stringify(started)}`);
    expect(await store.idempotency.fail(ref, { token: tokenOf("x"), requestId: requestId() })).toEqual({ status: "lost" });
    expect(await store.idempotency.fail(ref, { token: a, requestId: requestId() })).toEqual({ status: "ok", fence: started.fence });
    expect(await store.idempotency.inspect(ref)).toEqual({ state: "absent" });
    const again = await store.idempotency.begin(ref, begin(tokenOf("b")));
    expect(again).toMatchObject({ status: "started" });
    expect(again.status === "started" && again.fence).toBeGreaterThan(started.fence);
  });

  it("a heartbeat moves the deadline (by the begin's ttl without one); a stranger's heartbeat is lost", async () => {
    const store = newStore();
    const ref = freshRef("idem-heartbeat");
    const a = tokenOf("a");
    const started = await store.idempotency.begin(ref, begin(a, 3000));
    if (started.status !== "started") throw new Error(`not started: ${JSON.stringify(started)}`);
    const beat = await timed(() => store.idempotency.heartbeat(ref, { token: a, ttlMs: 8000 }));
    expect(beat.value).toEqual({ status: "ok", expiresAt: timeBetween(beat.t0, beat.t1, 8000), ttlMs: 8000, fence: started.fence });
    expect(await store.idempotency.inspect(ref)).toMatchObject({
      state: "started",
      expiresAt: beat.value.status === "ok" ? beat.value.expiresAt : -1,
    });
    const plain = await timed(() => store.idempotency.heartbeat(ref, { token: a }));
    expect(plain.value).toEqual({ status: "ok", expiresAt: timeBetween(plain.t0, plain.t1, 3000), ttlMs: 3000, fence: started.fence });
    expect(await store.idempotency.heartbeat(ref, { token: tokenOf("x") })).toEqual({ status: "lost" });
    expect(await store.idempotency.watch(ref, { fence: started.fence })).toMatchObject({ state: "held" });
  });

  it("a start whose deadline passed is absent: its owner's token is lost, its watch lapsed, and the next begin starts", async () => {
    const store = newStore();
    const ref = freshRef("idem-lapse");
    const a = tokenOf("a");
    const started = await store.idempotency.begin(ref, begin(a, SHORT_TTL_MS));
    if (started.status !== "started") throw new Error(`not started: ${JSON.stringify(started)}`);
    await untilStore(
      () => store.idempotency.inspect(ref),
      (s) => s.state === "absent",
    );
    expect(await store.idempotency.complete(ref, finish(a, "late"))).toEqual({ status: "lost" });
    expect(await store.idempotency.heartbeat(ref, { token: a })).toEqual({ status: "lost" });
    expect(await store.idempotency.watch(ref, { fence: started.fence })).toEqual({ state: "lapsed" });
    const b = tokenOf("b");
    const next = await store.idempotency.begin(ref, begin(b));
    expect(next).toMatchObject({ status: "started", token: b });
    expect(next.status === "started" && next.fence).toBeGreaterThan(started.fence);
  });

  it("fingerprints: a different one is a mismatch while the record is kept; none matches any; the first one sticks", async () => {
    const store = newStore();
    const ref = freshRef("idem-fingerprint");
    const a = tokenOf("a");
    await store.idempotency.begin(ref, begin(a, 5000, { fingerprint: "fp-1" }));
    expect(await store.idempotency.begin(ref, begin(tokenOf("b"), 5000, { fingerprint: "fp-2" }))).toEqual({ status: "mismatch" });
    expect(await store.idempotency.begin(ref, begin(tokenOf("c")))).toMatchObject({ status: "in_progress" });
    await store.idempotency.complete(ref, finish(a, "ok"));
    expect(await store.idempotency.begin(ref, begin(tokenOf("d"), 5000, { fingerprint: "fp-2" }))).toEqual({ status: "mismatch" });
    expect(await store.idempotency.begin(ref, begin(tokenOf("e"), 5000, { fingerprint: "fp-1" }))).toMatchObject({
      status: "completed",
      response: "ok",
    });
  });

  it("inspect of a key never begun is absent; inspectWaiting reads the same states as inspect", async () => {
    const store = newStore();
    const ref = freshRef("idem-absent");
    expect(await store.idempotency.inspect(ref)).toEqual({ state: "absent" });
    expect(await store.idempotency.inspectWaiting(ref)).toEqual({ state: "absent" });
    const a = tokenOf("a");
    await store.idempotency.begin(ref, begin(a, 5000, { holder: "w" }));
    expect(await store.idempotency.inspectWaiting(ref)).toEqual(await store.idempotency.inspect(ref));
    // A waiter looked: on Redis the complete says someone may wait (the Durable store's object hears every complete anyway).
    const done = await store.idempotency.complete(ref, finish(a, null));
    expect(done).toMatchObject({ status: "ok" });
    if (store.kind === "redis") expect(done).toMatchObject({ waited: true });
    expect(await store.idempotency.inspectWaiting(ref)).toEqual(await store.idempotency.inspect(ref));
  });
}
