import { expect, it } from "vitest";
import { KEY_ADMIN, type StoreKind, uniqueName } from "../../support/workers/api.js";
import { eventually } from "../../support/workers/lockObjectHelpers.js";
import { electionApi } from "./electionApi.js";

/**
 * Leader election over HTTP and the wait socket, written once and run on both
 * stores (test/conformance/index.ts): campaign, the line, proclaim, resign,
 * a lapse, heartbeat, who leads, and bad input.
 */
export function electionConformance(kind: StoreKind) {
  const { post, get, path, leader, untilWaiters, socketCampaign } = electionApi(kind);

  it("a campaign of a free election leads at once: its lease's fence is the term, and everyone sees its value", async () => {
    const name = uniqueName("el-lead");
    const before = Date.now();
    const res = await post(path(name, "campaign"), { value: "10.0.0.1:8080", ttlMs: 5000 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name, ttlMs: 5000, count: 1 });
    expect(res.body.token).toMatch(/^hf_/);
    const now = await leader(name);
    expect(now).toEqual({
      name,
      value: "10.0.0.1:8080",
      term: res.body.fence,
      since: expect.any(Number),
      expiresAt: res.body.expiresAt,
      position: 1,
      waiters: 0,
    });
    expect(now.since).toBeGreaterThanOrEqual(before - 1000);
    expect(now.since).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it("nobody leads an election never campaigned for", async () => {
    const name = uniqueName("el-none");
    expect(await leader(name)).toEqual({ name, value: null, term: null, since: null, expiresAt: null, position: 0, waiters: 0 });
  });

  it("a campaign that will not wait is 409 locked while someone leads, and names the leader's value", async () => {
    const name = uniqueName("el-busy");
    await post(path(name, "campaign"), { value: "a", ttlMs: 5000 });
    const res = await post(path(name, "campaign"), { value: "b", ttlMs: 5000 });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe("locked");
    expect(res.body.holder).toBe("a");
    expect((await leader(name)).value).toBe("a");
  });

  it("campaigns wait in line, first come first led; a resign hands over at once, each term above the last", async () => {
    const name = uniqueName("el-fifo");
    const a = (await post(path(name, "campaign"), { value: "a", ttlMs: 30_000 })).body;
    const b = post(path(name, "campaign"), { value: "b", ttlMs: 30_000, waitMs: 20_000 });
    await untilWaiters(name, 1);
    const c = post(path(name, "campaign"), { value: "c", ttlMs: 30_000, waitMs: 20_000 });
    await untilWaiters(name, 2);

    expect((await post(path(name, "resign"), { token: a.token })).body).toEqual({ resigned: true });
    const bLeads = await b;
    expect(bLeads.status).toBe(200);
    expect(bLeads.body.fence).toBeGreaterThan(a.fence);
    expect(await leader(name)).toMatchObject({ value: "b", term: bLeads.body.fence, waiters: 1 });

    await post(path(name, "resign"), { token: bLeads.body.token });
    const cLeads = await c;
    expect(cLeads.status).toBe(200);
    expect(cLeads.body.fence).toBeGreaterThan(bLeads.body.fence);
    expect(await leader(name)).toMatchObject({ value: "c", term: cLeads.body.fence, waiters: 0 });
  });

  it("a leader that stops heartbeating is replaced at its lease's end by the next in line", async () => {
    const name = uniqueName("el-lapse");
    const a = (await post(path(name, "campaign"), { value: "a", ttlMs: 600 })).body;
    const started = Date.now();
    const b = await post(path(name, "campaign"), { value: "b", ttlMs: 5000, waitMs: 20_000 });
    expect(b.status).toBe(200);
    expect(Date.now()).toBeGreaterThanOrEqual(started + 300);
    expect(b.body.fence).toBeGreaterThan(a.fence);
    expect((await leader(name)).value).toBe("b");
    // The lapsed leader can no longer speak for the election, nor resign it.
    const late = await post(path(name, "proclaim"), { token: a.token, value: "a again" });
    expect(late.status).toBe(409);
    expect(late.body.error).toBe("lease_lost");
    expect((await post(path(name, "resign"), { token: a.token })).status).toBe(409);
    expect((await leader(name)).value).toBe("b");
  });

  it("the leader proclaims a new value in its term; anyone else's proclaim is 409 lease_lost and changes nothing", async () => {
    const name = uniqueName("el-proclaim");
    const a = (await post(path(name, "campaign"), { value: "v1", ttlMs: 5000 })).body;
    const said = await post(path(name, "proclaim"), { token: a.token, value: "v2" });
    expect(said.status).toBe(200);
    expect(said.body).toEqual({ term: a.fence, expiresAt: a.expiresAt, position: 2 });
    expect(await leader(name)).toMatchObject({ value: "v2", term: a.fence, expiresAt: a.expiresAt });

    const other = await post(path(name, "proclaim"), { token: "hf_AAAAAAAAAAAAAAAAAAAAAAAA", value: "mine" });
    expect(other.status).toBe(409);
    expect(other.body.error).toBe("lease_lost");
    await post(path(name, "resign"), { token: a.token });
    const resigned = await post(path(name, "proclaim"), { token: a.token, value: "v3" });
    expect(resigned.status).toBe(409);
    expect(resigned.body.error).toBe("lease_lost");
    expect(await leader(name)).toMatchObject({ value: null, term: null });
  });

  it("a heartbeat keeps the leader's lease and term; a stranger's is 409 lease_lost", async () => {
    const name = uniqueName("el-hb");
    const a = (await post(path(name, "campaign"), { value: "a", ttlMs: 1000 })).body;
    const hb = await post(path(name, "heartbeat"), { token: a.token, ttlMs: 20_000 });
    expect(hb.status).toBe(200);
    expect(hb.body).toMatchObject({ ttlMs: 20_000, fence: a.fence });
    expect(hb.body.expiresAt).toBeGreaterThan(a.expiresAt + 15_000);
    expect((await post(path(name, "heartbeat"), { token: "hf_AAAAAAAAAAAAAAAAAAAAAAAA" })).body.error).toBe("lease_lost");
    expect(await leader(name)).toMatchObject({ value: "a", term: a.fence, expiresAt: hb.body.expiresAt });
  });

  it("a resign retried with the same request id is answered as the first time", async () => {
    const name = uniqueName("el-retry");
    const { call } = (await import("../../support/workers/api.js")).api(kind);
    const a = (await post(path(name, "campaign"), { value: "a", ttlMs: 5000 })).body;
    const headers = { "holdfast-request-id": `rq-${name}` };
    const first = await call("POST", path(name, "resign"), { token: a.token }, { headers });
    const again = await call("POST", path(name, "resign"), { token: a.token }, { headers });
    expect(first.body).toEqual({ resigned: true });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ resigned: true });
  });

  it("campaigns on a wait socket in line with HTTP ones, and the socket keeps the lease", async () => {
    const name = uniqueName("el-socket");
    const a = (await post(path(name, "campaign"), { value: "a", ttlMs: 30_000 })).body;
    const s = await socketCampaign(name, { value: "on a socket", ttlMs: 5000, waitMs: 20_000 });
    await untilWaiters(name, 1);
    await post(path(name, "resign"), { token: a.token });
    const granted = await s.next("granted");
    expect(granted.grant.fence).toBeGreaterThan(a.fence);
    s.ws.send(JSON.stringify({ type: "ack", token: granted.grant.token }));
    await s.next("held");
    expect(await leader(name)).toMatchObject({ value: "on a socket", term: granted.grant.fence });
    // The socket's leader proclaims over HTTP with its token, as any leader does.
    expect((await post(path(name, "proclaim"), { token: granted.grant.token, value: "said" })).status).toBe(200);
    expect((await leader(name)).value).toBe("said");
    s.ws.close();
  });

  const badCampaigns: Array<[string, unknown, string]> = [
    ["a value over 4096 bytes", { value: "x".repeat(4097), ttlMs: 1000 }, "invalid_value"],
    ["a value of 2000 three-byte characters (6000 bytes)", { value: "€".repeat(2000), ttlMs: 1000 }, "invalid_value"],
    ["an empty value", { value: "", ttlMs: 1000 }, "invalid_value"],
    ["no value", { ttlMs: 1000 }, "invalid_value"],
    ["a token (campaigns do not re-enter)", { value: "a", ttlMs: 1000, token: "hf_AAAAAAAAAAAAAAAAAAAAAAAA" }, "invalid_body"],
    ["no ttlMs", { value: "a" }, "invalid_ttl"],
  ];
  for (const [label, body, code] of badCampaigns) {
    it(`a campaign with ${label} is 400 ${code} and changes nothing`, async () => {
      const name = uniqueName("el-bad");
      const res = await post(path(name, "campaign"), body);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(code);
      expect(res.body.message).toEqual(expect.any(String));
      expect((await leader(name)).term).toBeNull();
    });
  }

  it("a value of 4096 bytes is taken whole, on the campaign and by proclaim", async () => {
    const name = uniqueName("el-big");
    const value = "é".repeat(2048); // 4096 bytes
    const a = await post(path(name, "campaign"), { value, ttlMs: 5000 });
    expect(a.status).toBe(200);
    expect((await leader(name)).value).toBe(value);
    const next = "ü".repeat(2048);
    expect((await post(path(name, "proclaim"), { token: a.body.token, value: next })).status).toBe(200);
    expect((await leader(name)).value).toBe(next);
  });

  it("a proclaim without a token, or with a value too large, is 400 naming it and changes nothing", async () => {
    const name = uniqueName("el-badp");
    const a = (await post(path(name, "campaign"), { value: "kept", ttlMs: 5000 })).body;
    const noToken = await post(path(name, "proclaim"), { value: "x" });
    expect(noToken.status).toBe(400);
    expect(noToken.body.error).toBe("invalid_token");
    const tooLarge = await post(path(name, "proclaim"), { token: a.token, value: "x".repeat(4097) });
    expect(tooLarge.status).toBe(400);
    expect(tooLarge.body.error).toBe("invalid_value");
    expect(await leader(name)).toMatchObject({ value: "kept", term: a.fence });
  });

  it("every new leader and every new value is a change in the history, in order, each at the next position", async () => {
    const name = uniqueName("el-changes");
    const a = (await post(path(name, "campaign"), { value: "a", ttlMs: 30_000 })).body;
    const b = post(path(name, "campaign"), { value: "b", ttlMs: 30_000, waitMs: 20_000 });
    await untilWaiters(name, 1);
    await post(path(name, "proclaim"), { token: a.token, value: "a2" });
    // The same value again is no change (a retried proclaim appends nothing).
    expect((await post(path(name, "proclaim"), { token: a.token, value: "a2" })).body.position).toBe(2);
    await post(path(name, "resign"), { token: a.token });
    const bLeads = (await b).body;
    await post(path(name, "proclaim"), { token: bLeads.token, value: "b2" });
    const res = await get(path(name, "changes"));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name, value: "b2", term: bLeads.fence, position: 4, first: 1 });
    expect(res.body.changes.map((c: any) => [c.position, c.term, c.value])).toEqual([
      [1, a.fence, "a"],
      [2, a.fence, "a2"],
      [3, bLeads.fence, "b"],
      [4, bLeads.fence, "b2"],
    ]);
    expect(await leader(name)).toMatchObject({ value: "b2", position: 4 });
  });

  it("the history keeps the last 64 changes: the oldest kept moves on", async () => {
    const name = uniqueName("el-kept");
    const a = (await post(path(name, "campaign"), { value: "v0", ttlMs: 30_000 })).body;
    for (let i = 1; i < 70; i++) await post(path(name, "proclaim"), { token: a.token, value: `v${i}` });
    const res = (await get(path(name, "changes"))).body;
    expect(res.position).toBe(70);
    expect(res.first).toBe(7);
    expect(res.changes).toHaveLength(64);
    expect(res.changes[0]).toMatchObject({ position: 7, value: "v6" });
    expect(res.changes[63]).toMatchObject({ position: 70, value: "v69" });
  });

  it("changes?since=N answers only the changes after N; since the last position, none", async () => {
    const name = uniqueName("el-since");
    const a = (await post(path(name, "campaign"), { value: "a", ttlMs: 30_000 })).body;
    await post(path(name, "proclaim"), { token: a.token, value: "a2" });
    await post(path(name, "proclaim"), { token: a.token, value: "a3" });
    const after1 = await get(`${path(name, "changes")}?since=1`);
    expect(after1.status).toBe(200);
    expect(after1.body).toMatchObject({ value: "a3", term: a.fence, position: 3, first: 1 });
    expect(after1.body.changes.map((c: any) => [c.position, c.value])).toEqual([
      [2, "a2"],
      [3, "a3"],
    ]);
    expect((await get(`${path(name, "changes")}?since=0`)).body.changes).toHaveLength(3);
    expect((await get(`${path(name, "changes")}?since=3`)).body).toMatchObject({ position: 3, changes: [] });
  });

  it("changes?since= a position from the future or not a whole number is 400 invalid_position naming it", async () => {
    const name = uniqueName("el-since-bad");
    const a = (await post(path(name, "campaign"), { value: "a", ttlMs: 30_000 })).body;
    await post(path(name, "proclaim"), { token: a.token, value: "a2" });
    const future = await get(`${path(name, "changes")}?since=3`);
    expect(future.status).toBe(400);
    expect(future.body).toMatchObject({ error: "invalid_position" });
    expect(future.body.message).toContain("beyond the election's last position, 2");
    for (const since of ["-1", "1.5", "two", "", "99999999999999999"]) {
      const res = await get(`${path(name, "changes")}?since=${encodeURIComponent(since)}`);
      expect(res.status, since).toBe(400);
      expect(res.body, since).toMatchObject({ error: "invalid_position" });
      expect(res.body.message, since).toContain(JSON.stringify(since));
    }
    // Nothing changed: the leader and its history are as they were.
    expect(await leader(name)).toMatchObject({ value: "a2", term: a.fence, position: 2 });
  });

  it("an operator lists led elections and force-releases a leader, audited: the next in line leads", async () => {
    const prefix = uniqueName("el-ops");
    const a = (await post(path(`${prefix}-1`, "campaign"), { value: "stuck leader", ttlMs: 30_000 })).body;
    await post(path(`${prefix}-2`, "campaign"), { value: "other", ttlMs: 30_000 });
    const b = post(path(`${prefix}-1`, "campaign"), { value: "next", ttlMs: 30_000, waitMs: 20_000 });
    await untilWaiters(`${prefix}-1`, 1);
    const listed = await get(`/v1/elections?prefix=${prefix}`);
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((i: any) => [i.name, i.value]).sort()).toEqual([
      [`${prefix}-1`, "stuck leader"],
      [`${prefix}-2`, "other"],
    ]);
    expect((await post(path(`${prefix}-1`, "force-release"), { reason: "stuck" })).status).toBe(403);
    const freed = await post(path(`${prefix}-1`, "force-release"), { reason: "stuck for an hour", fence: a.fence }, { key: KEY_ADMIN });
    expect(freed.status).toBe(200);
    expect(freed.body).toMatchObject({ released: 1, fence: a.fence, holder: "stuck leader" });
    const next = await b;
    expect(next.status).toBe(200);
    expect(await leader(`${prefix}-1`)).toMatchObject({ value: "next", term: next.body.fence });
    const audit = await get("/v1/audit?limit=20", { key: KEY_ADMIN });
    expect(audit.body.entries.some((e: any) => e.kind === "election" && e.name === `${prefix}-1` && e.reason === "stuck for an hour")).toBe(true);
  });

  it("terms only rise across many leaders, each handed over in line", async () => {
    const name = uniqueName("el-terms");
    let last = 0;
    for (let i = 0; i < 4; i++) {
      const res = await post(path(name, "campaign"), { value: `n${i}`, ttlMs: 5000, waitMs: 10_000 });
      expect(res.status).toBe(200);
      expect(res.body.fence).toBeGreaterThan(last);
      last = res.body.fence;
      await post(path(name, "resign"), { token: res.body.token });
    }
    await eventually(
      () => leader(name),
      (l) => l.term === null,
    );
  });
}
