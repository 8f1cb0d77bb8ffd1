// The alarm's look at leases kept for onExpire awaits the store once per lease. Storage allows one
// kv.list() iterator at a time, so a list made meanwhile (by a request the object serves while the
// alarm waits on the network: the runtime lets one in then) must not end the look with an error.
import { runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import { checkExpiries, deliverDueNotifications, keepExpiry } from "../../../src/lockObject/expiries/expiries";
import { redisStoreOf } from "../../../src/worker/stores";
import { envFor, uniqueName } from "../../support/workers/api";
import { lockObject } from "../../support/workers/lockObjectHelpers";

it("the alarm's expiry check looks at every due lease even when storage is listed while it waits on the store", async () => {
  const name = uniqueName("expiry-list");
  const store = redisStoreOf(envFor("redis"));
  if (!store) throw new Error("the workers tests' Redis store is not configured");
  const outcome = await runInDurableObject(lockObject(name), async (_o, state) => {
    const kv = state.storage.kv;
    // Two leases of locks never acquired in Redis, due now: each is asked of the store, one at a time.
    for (const fence of [1, 2]) {
      keepExpiry(kv, {
        kind: "mutex",
        store: "redis",
        ref: { ns: "tenant-a", name: `${name}-${fence}` },
        fence,
        expiresAt: Date.now(),
        ttlMs: 0,
        // Nothing listens there: each delivery fails at once and is kept for another try.
        onExpire: "http://127.0.0.1:9/lapsed",
      });
    }
    const looked = checkExpiries(kv, () => store, Date.now() + 1);
    // What another event does while the first lease's store call is in flight.
    void [...kv.list({ prefix: "unrelated:" })];
    const error = await looked.then(
      () => undefined,
      (err: unknown) => String(err),
    );
    const lapsed = [...kv.list({ prefix: "notify:" })].length;
    // The same for the deliveries of the notifications the lapses left: one fetch each.
    // Due once the grace a lapse waits for (a late heartbeat) is over: an hour on suffices.
    const delivered = deliverDueNotifications(kv, "", Date.now() + 3_600_000);
    void [...kv.list({ prefix: "unrelated:" })];
    const deliveryError = await delivered.then(
      () => undefined,
      (err: unknown) => String(err),
    );
    const tried = [...kv.list<{ attempts: number }>({ prefix: "notify:" })].map(([, n]) => n.attempts);
    return { error, left: [...kv.list({ prefix: "watch:" })].length, lapsed, deliveryError, tried };
  });
  expect(outcome).toEqual({ error: undefined, left: 0, lapsed: 2, deliveryError: undefined, tried: [1, 1] });
});
