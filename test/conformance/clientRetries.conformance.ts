import { expect, it } from "vitest";
import { PICKUP_MS } from "../../src/limits.js";
import { api, sleep, type StoreKind, uniqueName } from "../support/workers/api.js";
import { eventually } from "../support/workers/lockObjectHelpers.js";

const HEADER = "Holdfast-Request-Id";
const newId = () => `rq-${crypto.randomUUID()}`;

/**
 * A client that lost an answer (a dropped connection, a timeout) sends the
 * same write again with the same Holdfast-Request-Id: it must apply once.
 * Run against both stores through the HTTP API.
 */
export function clientRetriesConformance(kind: StoreKind) {
  const { post, get, raw } = api(kind);
  const withId = (id: string) => ({ headers: { [HEADER]: id } });

  it("a retried mutex acquire gets its first grant again, and holds the lock once", async () => {
    const name = uniqueName("retry-acquire");
    const id = newId();
    const first = await post(`/v1/locks/${name}/acquire`, { ttlMs: 5000 }, withId(id));
    const again = await post(`/v1/locks/${name}/acquire`, { ttlMs: 5000 }, withId(id));
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ token: first.body.token, fence: first.body.fence, count: 1 });
    expect((await get(`/v1/locks/${name}`)).body).toMatchObject({ held: true, count: 1, fence: first.body.fence });
    // Another request (another id) is a different caller: it waits its turn.
    expect((await post(`/v1/locks/${name}/acquire`, { ttlMs: 5000 }, withId(newId()))).status).toBe(409);
    // One release frees it: there is no second, orphaned grant.
    expect((await post(`/v1/locks/${name}/release`, { token: first.body.token })).body).toEqual({ released: true, count: 0 });
    expect((await get(`/v1/locks/${name}`)).body.held).toBe(false);
  });

  it("a retried release or re-entry gets its first answer, not lease_lost or a second count", async () => {
    const name = uniqueName("retry-release");
    const { token } = (await post(`/v1/locks/${name}/acquire`, { ttlMs: 5000 })).body;
    const reenterId = newId();
    const re1 = await post(`/v1/locks/${name}/acquire`, { ttlMs: 5000, token }, withId(reenterId));
    const re2 = await post(`/v1/locks/${name}/acquire`, { ttlMs: 5000, token }, withId(reenterId));
    expect([re1.body.count, re2.body.count]).toEqual([2, 2]);
    const releaseId = newId();
    const rel1 = await post(`/v1/locks/${name}/release`, { token }, withId(releaseId));
    const rel2 = await post(`/v1/locks/${name}/release`, { token }, withId(releaseId));
    expect(rel1.body).toEqual({ released: false, count: 1 });
    expect(rel2.body).toEqual({ released: false, count: 1 });
    expect((await get(`/v1/locks/${name}`)).body).toMatchObject({ held: true, count: 1 });
  });

  it("a retried read-write lock or semaphore acquire takes one hold, and its retried release answers ok", async () => {
    const rw = uniqueName("retry-rw");
    const id = newId();
    const w1 = await post(`/v1/rwlocks/${rw}/write/acquire`, { ttlMs: 5000 }, withId(id));
    const w2 = await post(`/v1/rwlocks/${rw}/write/acquire`, { ttlMs: 5000 }, withId(id));
    expect(w2.body).toMatchObject({ token: w1.body.token, fence: w1.body.fence, count: 1 });
    const relId = newId();
    const r1 = await post(`/v1/rwlocks/${rw}/write/release`, { token: w1.body.token }, withId(relId));
    const r2 = await post(`/v1/rwlocks/${rw}/write/release`, { token: w1.body.token }, withId(relId));
    expect([r1.status, r2.status]).toEqual([200, 200]);
    expect((await get(`/v1/rwlocks/${rw}`)).body.mode).toBe("free");

    const sem = uniqueName("retry-sem");
    const sid = newId();
    const s1 = await post(`/v1/semaphores/${sem}/acquire`, { limit: 3, permits: 2, ttlMs: 5000 }, withId(sid));
    const s2 = await post(`/v1/semaphores/${sem}/acquire`, { limit: 3, permits: 2, ttlMs: 5000 }, withId(sid));
    expect(s2.body.token).toBe(s1.body.token);
    expect((await get(`/v1/semaphores/${sem}`)).body).toMatchObject({ used: 2, holders: 1 });
  });

  it("a retried read-write lock re-entry or release gets its first answer: one level on, one level off", async () => {
    const rw = uniqueName("retry-rw-levels");
    const { token } = (await post(`/v1/rwlocks/${rw}/read/acquire`, { ttlMs: 5000 })).body;
    const reenterId = newId();
    const re1 = await post(`/v1/rwlocks/${rw}/read/acquire`, { ttlMs: 5000, token }, withId(reenterId));
    const re2 = await post(`/v1/rwlocks/${rw}/read/acquire`, { ttlMs: 5000, token }, withId(reenterId));
    expect([re1.body.count, re2.body.count]).toEqual([2, 2]);
    const releaseId = newId();
    const rel1 = await post(`/v1/rwlocks/${rw}/read/release`, { token }, withId(releaseId));
    const rel2 = await post(`/v1/rwlocks/${rw}/read/release`, { token }, withId(releaseId));
    expect([rel1.body, rel2.body]).toEqual([
      { released: false, mode: "read", count: 1 },
      { released: false, mode: "read", count: 1 },
    ]);
    // One level is left: the next release (another id) is the last.
    expect((await post(`/v1/rwlocks/${rw}/read/release`, { token })).body).toEqual({ released: true, mode: "read", count: 0 });
    expect((await get(`/v1/rwlocks/${rw}`)).body.mode).toBe("free");
  });

  it("a retried semaphore release gets its first answer, and frees the permits once", async () => {
    const sem = uniqueName("retry-sem-release");
    const a = (await post(`/v1/semaphores/${sem}/acquire`, { limit: 3, permits: 2, ttlMs: 5000 })).body;
    await post(`/v1/semaphores/${sem}/acquire`, { limit: 3, permits: 1, ttlMs: 5000 });
    const id = newId();
    const r1 = await post(`/v1/semaphores/${sem}/release`, { token: a.token }, withId(id));
    const r2 = await post(`/v1/semaphores/${sem}/release`, { token: a.token }, withId(id));
    expect(r1.body).toEqual({ released: true, permits: 2, available: 2 });
    expect(r2.status).toBe(200);
    expect(r2.body).toEqual(r1.body);
    expect((await get(`/v1/semaphores/${sem}`)).body).toMatchObject({ used: 1, holders: 1 });
  });

  it("a retried idempotency fail gets its first answer, and leaves the next owner's run alone", async () => {
    const key = uniqueName("retry-fail");
    const first = (await post(`/v1/idempotency/${key}/begin`, { ttlMs: 5000 })).body;
    const id = newId();
    const f1 = await post(`/v1/idempotency/${key}/fail`, { token: first.token }, withId(id));
    expect(f1.status).toBe(200);
    const next = await post(`/v1/idempotency/${key}/begin`, { ttlMs: 5000 });
    expect(next.status).toBe(201);
    const f2 = await post(`/v1/idempotency/${key}/fail`, { token: first.token }, withId(id));
    expect(f2.status).toBe(200);
    expect(f2.body).toEqual(f1.body);
    expect((await get(`/v1/idempotency/${key}`)).body).toMatchObject({ state: "started", fence: next.body.fence });
  });

  it("a retried idempotency begin and complete apply once", async () => {
    const key = uniqueName("retry-begin");
    const id = newId();
    const b1 = await post(`/v1/idempotency/${key}/begin`, { ttlMs: 5000 }, withId(id));
    const b2 = await post(`/v1/idempotency/${key}/begin`, { ttlMs: 5000 }, withId(id));
    expect([b1.status, b2.status]).toEqual([201, 201]);
    expect(b2.body.token).toBe(b1.body.token);
    const cid = newId();
    const c1 = await post(`/v1/idempotency/${key}/complete`, { token: b1.body.token, response: { n: 1 } }, withId(cid));
    const c2 = await post(`/v1/idempotency/${key}/complete`, { token: b1.body.token, response: { n: 1 } }, withId(cid));
    expect([c1.status, c2.status]).toEqual([200, 200]);
    expect(c2.body.completedAt).toBe(c1.body.completedAt);
  });

  it("a retried idempotency begin that comes after its start lapsed and another caller took the key over is in_progress, not that start again", async () => {
    const key = uniqueName("retry-begin-late");
    const id = newId();
    // The first try started the work (its answer lost), and nobody heard from its owner past the deadline.
    const b1 = await post(`/v1/idempotency/${key}/begin`, { ttlMs: 200 }, withId(id));
    expect(b1.status).toBe(201);
    await eventually(
      () => get(`/v1/idempotency/${key}`),
      (r) => r.body.state === "absent",
    );
    const other = await post(`/v1/idempotency/${key}/begin`, { ttlMs: 5000 });
    expect(other.status).toBe(201);
    // The retry must not be handed the lapsed start's token: the other caller runs the work now.
    const b2 = await post(`/v1/idempotency/${key}/begin`, { ttlMs: 200 }, withId(id));
    expect(b2.status).toBe(409);
    expect(b2.body.error).toBe("in_progress");
  });

  it(`a waiter whose answer was lost and who retries gets the lock once the lost grant is taken back (${PICKUP_MS} ms), and holds it alone`, async () => {
    const name = uniqueName("retry-waiter");
    const holder = (await post(`/v1/locks/${name}/acquire`, { ttlMs: 10_000 })).body;
    const id = newId();
    // The first attempt waits in line; its answer is never read (the connection dropped).
    const lost = raw("POST", `/v1/locks/${name}/acquire`, { ttlMs: 10_000, waitMs: 5000 }, { [HEADER]: id });
    await expect.poll(async () => (await get(`/v1/locks/${name}`)).body.waiters).toBe(1);
    await post(`/v1/locks/${name}/release`, { token: holder.token });
    const unread = await lost; // granted from the line; its body is not read, so never picked up
    expect(unread.status).toBe(200);
    const started = Date.now();
    const retry = await post(`/v1/locks/${name}/acquire`, { ttlMs: 10_000, waitMs: 5000 }, withId(id));
    expect(retry.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(PICKUP_MS + 2000);
    await sleep(500);
    expect((await get(`/v1/locks/${name}`)).body).toMatchObject({ held: true, fence: retry.body.fence });
    expect((await post(`/v1/locks/${name}/heartbeat`, { token: retry.body.token })).status).toBe(200);
    // The lost attempt's grant is gone: its token holds nothing.
    const lostGrant = (await unread.json()) as { token: string };
    expect(lostGrant.token).not.toBe(retry.body.token);
    expect((await post(`/v1/locks/${name}/heartbeat`, { token: lostGrant.token })).status).toBe(409);
  });

  it("a remembered answer is only for the same API key naming the same token: a seen request id reveals nothing", async () => {
    const name = uniqueName("retry-owner");
    // Two keys of one namespace (a rotation): the same tenant, different callers.
    const rotated = api(kind, { API_KEYS: "tenant-a=key-aaaaaaaa,tenant-a=key-a-rotated-2" });
    const { token } = (await rotated.post(`/v1/locks/${name}/acquire`, { ttlMs: 5000 })).body;
    const id = newId();
    const first = await rotated.post(`/v1/locks/${name}/acquire`, { ttlMs: 5000, token }, withId(id));
    expect(first.body).toMatchObject({ token, count: 2 });
    for (const [key, guess] of [
      ["key-a-rotated-2", token],
      ["key-aaaaaaaa", "hf_AAAAAAAAAAAAAAAAAAAAAAAA"],
      ["key-a-rotated-2", "hf_AAAAAAAAAAAAAAAAAAAAAAAA"],
    ]) {
      const replay = await rotated.post(`/v1/locks/${name}/acquire`, { ttlMs: 5000, token: guess }, { ...withId(id), key });
      if (guess === token)
        expect(replay.body.count).toBe(3); // a new re-entry by the holder's token, not the first answer
      else expect(replay.status).toBe(409);
      expect(JSON.stringify(replay.body).includes(token) && guess !== token).toBe(false);
    }
    const release = await rotated.post(`/v1/locks/${name}/release`, { token: "hf_BBBBBBBBBBBBBBBBBBBBBBBB" }, withId(newId()));
    expect(release.status).toBe(409);
  });

  it("a malformed Holdfast-Request-Id is 400 invalid_request_id and changes nothing", async () => {
    const name = uniqueName("bad-id");
    for (const bad of ["short", "x".repeat(129), "has space in it!!", "slashes/are/not/allowed/here"]) {
      const res = await post(`/v1/locks/${name}/acquire`, { ttlMs: 5000 }, withId(bad));
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("invalid_request_id");
    }
    expect((await get(`/v1/locks/${name}`)).body.held).toBe(false);
  });
}
