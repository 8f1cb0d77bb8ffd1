import { Redis } from "@upstash/redis";
import { describe, expect, inject, it } from "vitest";
import { Election, InvalidInputError, LeaseLostError, LockedError } from "holdfast";

/**
 * The library's election as an app uses it: `import { Election } from "holdfast"` over a real
 * @upstash/redis client, against a real redis-server behind the project's Upstash gateway.
 */
const redis = () => new Redis({ url: inject("upstashUrl"), token: inject("upstashToken") });
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

describe("Election (library)", () => {
  it("campaigns, proclaims, resigns; a waiting campaign leads once the leader resigns, at a higher term", async () => {
    const name = unique("lib-elect");
    const a = new Election(redis(), name);
    const b = new Election(redis(), name);
    const first = await a.campaign({ value: "a", ttlMs: 10_000 });
    await expect(b.campaign({ value: "b", ttlMs: 10_000 })).rejects.toBeInstanceOf(LockedError);
    expect(await a.proclaim(first.token, "a2")).toMatchObject({ term: first.fence, position: 2 });
    expect(await b.leader()).toMatchObject({ value: "a2", term: first.fence, expiresAt: first.expiresAt, position: 2 });
    const waiting = b.campaign({ value: "b", ttlMs: 10_000, waitMs: 10_000 });
    await a.resign(first.token);
    const second = await waiting;
    expect(second.fence).toBeGreaterThan(first.fence);
    expect(await a.leader()).toMatchObject({ value: "b", term: second.fence, position: 3 });
    expect((await a.changes(1)).changes.map((c) => [c.position, c.value])).toEqual([
      [2, "a2"],
      [3, "b"],
    ]);
    await expect(a.proclaim(first.token, "not mine")).rejects.toBeInstanceOf(LeaseLostError);
    await b.resign(second.token);
    expect(await a.leader()).toMatchObject({ value: null, term: null });
  });

  it("refuses a value over 4096 bytes, and an empty one, before the store: nothing changes", async () => {
    const name = unique("lib-bad");
    const e = new Election(redis(), name);
    await expect(e.campaign({ value: "x".repeat(4097), ttlMs: 1000 })).rejects.toMatchObject({ code: "invalid_value" });
    await expect(e.campaign({ value: "", ttlMs: 1000 })).rejects.toBeInstanceOf(InvalidInputError);
    expect(await e.leader()).toMatchObject({ term: null, position: 0 });
  });
});
