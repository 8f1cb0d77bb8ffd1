// On the Durable store a lock object wakes (its alarm) when what it keeps next needs cleaning up:
// each write moves that time to the state the write left, on the object's second lease as on its first.
import { expect, it } from "vitest";
import { api, uniqueName } from "../../support/workers/api";
import { objectAlarm } from "../../support/workers/lockObjectHelpers";

it("each lease on a Durable lock object schedules the object's alarm at that lease's end, the first and a later one alike", async () => {
  const { post } = api("durable");
  const name = uniqueName("cleanup");
  const first = (await post(`/v1/locks/${name}/acquire`, { ttlMs: 60_000 })).body;
  expect(await objectAlarm(name)).toBe(first.expiresAt);
  expect((await post(`/v1/locks/${name}/release`, { token: first.token })).status).toBe(200);
  const second = (await post(`/v1/locks/${name}/acquire`, { ttlMs: 5000 })).body;
  expect(second.expiresAt).toBeLessThan(first.expiresAt);
  expect(await objectAlarm(name)).toBe(second.expiresAt);
});

it("a read-write lock's object schedules its alarm at its holders' first end, for a later holder too", async () => {
  const { post } = api("durable");
  const name = uniqueName("rw-cleanup");
  const first = (await post(`/v1/rwlocks/${name}/read/acquire`, { ttlMs: 60_000 })).body;
  expect(await objectAlarm(name, "rwlock")).toBe(first.expiresAt);
  const second = (await post(`/v1/rwlocks/${name}/read/acquire`, { ttlMs: 5000 })).body;
  expect(await objectAlarm(name, "rwlock")).toBe(second.expiresAt);
});
