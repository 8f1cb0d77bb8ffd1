import { describe, expect, it } from "vitest";
import { idempotent } from "holdfast";
import { idempotentBackends } from "../support/idempotentBackends";
import { until } from "../support/workerServers";

/**
 * How long `idempotent(handler)` holds a key while its handler runs, on both backends (Redis, and a
 * holdfast service as `npm start` serves it): a number of ms is heartbeated, so a slow handler keeps
 * its key; a function gives the handler's time left to its runtime's deadline (as AWS Lambda's
 * context tells it), and the key is held until then and no longer, so a run cut off at its deadline
 * leaves the key to the sender's retry.
 */
const { backends: BACKENDS } = idempotentBackends();

const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
const post = (key: string) => new Request("https://shop.example/hook", { method: "POST", headers: { "idempotency-key": key }, body: "{}" });

/** What Hono's AWS Lambda adapter hands a fetch handler beside the request: the invocation's context among it. */
type LambdaEnv = { lambdaContext: { getRemainingTimeInMillis(): number } };
const lambdaEnv = (deadline: number): LambdaEnv => ({ lambdaContext: { getRemainingTimeInMillis: () => deadline - Date.now() } });

/** A handler that counts its runs; the first stays running until released (a slow one, or one its runtime cut off). */
function slowFirst() {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const state = { runs: 0, release };
  const handler = async (_request: Request, _env?: LambdaEnv) => {
    state.runs++;
    if (state.runs === 1) await gate;
    return new Response(`run ${state.runs}`);
  };
  return { state, handler };
}

describe.each(BACKENDS)("over $name", ({ keys }) => {
  it("ttlMs a number: a handler running three times past it keeps its key (heartbeats): every overlapping request is 409", async () => {
    const { state, handler } = slowFirst();
    // 1 s, not the 100 ms minimum: a heartbeat is sent a third of the way into the lease, and on a busy
    // 2-core runner one took longer than the rest of a 300 ms lease (the key lapsed with its handler running).
    const wrapped = idempotent(handler, { ...keys(), ttlMs: 1000 });
    const key = unique("slow");
    const first = wrapped(post(key));
    await until(
      () => state.runs,
      (runs) => runs === 1,
    );
    const since = Date.now();
    const last = await until(
      async () => ({ status: (await wrapped(post(key))).status, waited: Date.now() - since }),
      (seen) => seen.status !== 409 || seen.waited > 3000,
    );
    expect(last.status).toBe(409);
    state.release();
    expect(await (await first).text()).toBe("run 1");
    expect(state.runs).toBe(1);
  });

  it("ttlMs a function of the handler's arguments: the key is held to the handler's deadline, then the retry runs it", async () => {
    const { state, handler } = slowFirst();
    const asked: unknown[] = [];
    const wrapped = idempotent(handler, {
      ...keys(),
      ttlMs: (request, env) => {
        asked.push(request.headers.get("idempotency-key"));
        // A time left read off a clock comes with a fraction; it is rounded down.
        return (env as LambdaEnv).lambdaContext.getRemainingTimeInMillis() + 0.5;
      },
    });
    const key = unique("deadline");
    // The first invocation has 2 s left and never answers in them (its runtime would cut it off). The
    // overlapping request must come within them: 600 ms was too little on a busy runner.
    const cutOff = wrapped(post(key), lambdaEnv(Date.now() + 2000));
    await until(
      () => state.runs,
      (runs) => runs === 1,
    );
    const overlap = await wrapped(post(key), lambdaEnv(Date.now() + 10_000));
    expect(overlap.status).toBe(409);
    // Retry when the first's deadline has passed: within its 2 s, in whole seconds rounded up.
    expect(Number(overlap.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(overlap.headers.get("retry-after"))).toBeLessThanOrEqual(2);
    // Past the first's deadline the key is free (no heartbeat renewed it): the sender's retry runs the handler.
    const retried = await until(
      () => wrapped(post(key), lambdaEnv(Date.now() + 10_000)),
      (res) => res.status !== 409,
    );
    expect(await retried.text()).toBe("run 2");
    const replay = await wrapped(post(key), lambdaEnv(Date.now() + 10_000));
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await replay.text()).toBe("run 2");
    expect(asked.every((k) => k === key)).toBe(true);
    state.release();
    await cutOff;
    expect(state.runs).toBe(2);
  });

  it("a time left out of bounds is a TypeError naming ttlMs, before the key is touched or the handler runs", async () => {
    let runs = 0;
    const handler = async () => {
      runs++;
      return new Response("ran");
    };
    expect(() => idempotent(handler, { ...keys(), ttlMs: 50 })).toThrow(TypeError);
    expect(() => idempotent(handler, { ...keys(), ttlMs: 50 })).toThrow(/ttlMs is 50; it must be a whole number of ms in 100\.\.86400000/);
    const key = unique("bounds");
    for (const left of [99, Number.NaN, 86_400_001, Number.POSITIVE_INFINITY]) {
      const wrapped = idempotent(handler, { ...keys(), ttlMs: () => left });
      await expect(wrapped(post(key))).rejects.toThrow(/ttlMs\(request, \.\.\.\) gave/);
    }
    expect(runs).toBe(0);
    // Nothing was begun: the key is free for the next call.
    const ran = await idempotent(handler, { ...keys(), ttlMs: () => 5000 })(post(key));
    expect(await ran.text()).toBe("ran");
    expect(runs).toBe(1);
  });
});
