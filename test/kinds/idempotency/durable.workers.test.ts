import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { IDEMPOTENCY } from "../../../src/kinds/idempotency/types";
import { lockObjectOf } from "../../../src/lockObject/lockObjectOf";
import { durableStoreWith } from "../../../src/store/durable/DurableStore";
import { sleep, uniqueName } from "../../support/workers/api";

/**
 * What the HTTP conformance suite cannot see of the Durable store: retried
 * requests (same request id) and the clean-up alarm of an idle key's object.
 */
describe("durable store: idempotency internals", () => {
  const store = durableStoreWith((kind, ref) => lockObjectOf(env.LOCK_OBJECT, kind, ref), [IDEMPOTENCY]);
  const ns = "tenant-a";
  const objectOf = (key: string) => env.LOCK_OBJECT.get(env.LOCK_OBJECT.idFromName(`idempotency:${ns}:${key}`));

  it("a retried begin, complete or fail (same request id) gets the first answer", async () => {
    const ref = { ns, name: uniqueName("retry") };
    const begin = { token: "hf_first", ttlMs: 2000, retainMs: 60_000, requestId: "rq_begin-1" };
    const first = await store.idempotency.begin(ref, begin);
    expect(first).toMatchObject({ status: "started", token: "hf_first" });
    expect(await store.idempotency.begin(ref, { ...begin, token: "hf_second" })).toEqual(first);
    expect((await store.idempotency.begin(ref, { ...begin, token: "hf_third", requestId: "rq_begin-2" })).status).toBe("in_progress");

    const fail = { token: "hf_first", requestId: "rq_fail-1" };
    const failed = await store.idempotency.fail(ref, fail);
    expect(failed.status).toBe("ok");
    expect(await store.idempotency.fail(ref, fail)).toEqual(failed);

    const again = await store.idempotency.begin(ref, { ...begin, token: "hf_again", requestId: "rq_begin-3" });
    expect(again.status).toBe("started");
    const complete = { token: "hf_again", responseJson: "[1,2]", requestId: "rq_complete-1" };
    const done = await store.idempotency.complete(ref, complete);
    expect(done.status).toBe("ok");
    expect(await store.idempotency.complete(ref, complete)).toEqual(done);
    expect(await store.idempotency.complete(ref, { ...complete, requestId: "rq_complete-2" })).toEqual({ status: "lost" });
  });

  it("the clean-up alarm wakes when the record's retention ends and drops it", async () => {
    const key = uniqueName("tidy");
    const ref = { ns, name: key };
    const before = Date.now();
    // A TTL the complete lands inside even on a busy machine: the record's retention then runs from the complete.
    const s = await store.idempotency.begin(ref, { token: "hf_tidy", ttlMs: 5000, retainMs: 1000, requestId: "rq_tidy-1" });
    expect(s.status).toBe("started");
    expect((await store.idempotency.complete(ref, { token: "hf_tidy", responseJson: '"done"', requestId: "rq_tidy-2" })).status).toBe("ok");

    const stub = objectOf(key);
    const alarm = await runInDurableObject(stub, (_o, state) => state.storage.getAlarm());
    // The record's retention (1 s from completion) is the earliest thing to clean up.
    expect(alarm).toBeGreaterThanOrEqual(before + 1000);
    expect(alarm).toBeLessThanOrEqual(Date.now() + 1000);

    await sleep(Math.max(0, (alarm ?? 0) - Date.now()) + 50);
    await runDurableObjectAlarm(stub);
    const left = await runInDurableObject(stub, (_o, state) => ({
      record: state.storage.kv.get("idem"),
      fence: state.storage.kv.get("idem:fence"),
    }));
    expect(left.record).toBeUndefined();
    // The fence outlives the record, so the next start still gets a larger one.
    expect(left.fence).toMatchObject({ last: expect.any(Number) });
    expect(await store.idempotency.inspect(ref)).toEqual({ state: "absent" });
    // Something is still kept (fence, remembered answers), so the object is woken again to clean it up.
    expect(await runInDurableObject(stub, (_o, state) => state.storage.getAlarm())).toBeGreaterThan(Date.now());
  });
});
