import { env, runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import { api, uniqueName } from "../support/workers/api";
import { eventually } from "../support/workers/lockObjectHelpers";
import { socketWaiter } from "../support/workers/socketWaiter";

/**
 * A waiter's way into the line does not pass the namespace's listing (issue
 * 54). Every lock object of a namespace tells the object that keeps its
 * listing about itself (src/lockObject/listingUpdates.ts): a namespace that
 * used a thousand locks at once sends it a thousand notes at once. A waiter
 * that had to ask that object something (a wait socket's count against
 * MAX_SOCKETS_PER_NAMESPACE) got in line only after them, later the more
 * locks the namespace had used. Here that object is held busy for real
 * (blockConcurrencyWhile: nothing else runs in it until the test lets go),
 * and an HTTP waiter and a socket waiter both get in line meanwhile, while
 * a listing call sent to it before them is still unanswered.
 */
const { post, get } = api("durable");

it("waiters over HTTP and on a socket get in line while the namespace's listing object is busy", async () => {
  const name = uniqueName("busy-listing");
  const held = (await post(`/v1/locks/${name}/acquire`, { ttlMs: 30_000 })).body;
  const listing = env.NAMESPACE_OBJECT.get(env.NAMESPACE_OBJECT.idFromName("tenant-a"));
  // The holder's acquire told the listing of the lock (after its answer): heard before the object is held busy.
  await eventually(
    () => listing.names("mutex", name, undefined, 10),
    (n) => n.length === 1,
  );
  let letGo!: () => void;
  const gate = new Promise<void>((resolve) => {
    letGo = resolve;
  });
  let busy = false;
  const holding = runInDurableObject(listing, (_o, state) =>
    state.blockConcurrencyWhile(async () => {
      busy = true;
      await gate;
    }),
  );
  let listed = false;
  let socket: Awaited<ReturnType<typeof socketWaiter>> | undefined;
  try {
    await eventually(
      () => busy,
      (b) => b,
    );
    // Sent before the waiters: answered only once the object is let go.
    const names = listing.names("mutex", name, undefined, 10).then((n) => {
      listed = true;
      return n;
    });
    const overHttp = post(`/v1/locks/${name}/acquire`, { ttlMs: 5000, waitMs: 30_000 });
    const onSocket = socketWaiter(name, { ttlMs: 5000, waitMs: 30_000 }).then((s) => {
      socket = s;
      return s;
    });
    await eventually(
      () => get(`/v1/locks/${name}`),
      (r) => r.body.waiters === 2,
    );
    expect(listed).toBe(false);
    letGo();
    expect(await names).toEqual([name]);
    // The line goes on as ever: the socket leaves it, and the holder's release goes to the HTTP waiter.
    (await onSocket).ws.close(1000, "done");
    await eventually(
      () => get(`/v1/locks/${name}`),
      (r) => r.body.waiters === 1,
    );
    await post(`/v1/locks/${name}/release`, { token: held.token });
    expect((await overHttp).status).toBe(200);
  } finally {
    letGo();
    await holding;
    socket?.ws.close(1000, "done");
  }
});
