import { expect, it } from "vitest";
import { type StoreKind, uniqueName } from "../support/workers/api.js";
import { lockApi } from "../kinds/mutex/lockApi.js";
import { deliveries, eventually, newReceiver, runAlarmsUntilQuiet } from "../support/workers/lockObjectHelpers.js";

/**
 * Holder labels on every lock kind (the mutex first, then the many-holder
 * kinds): who holds it, in words, kept with the lease,
 * shown by GET, told to a caller turned away (409), handed over through the
 * line with the lease, and carried in the expiry notification.
 */
export function holderLabelConformance(kind: StoreKind) {
  const { post, get, path } = lockApi(kind);

  it("GET shows the holder's label, and a try-lock turned away is told who holds it and until when", async () => {
    const name = uniqueName("label");
    expect((await get(path(name))).body).toMatchObject({ held: false, holder: null });
    const grant = (await post(path(name, "acquire"), { ttlMs: 5000, holder: "report-worker@host-3 pid 4121" })).body;
    expect((await get(path(name))).body).toMatchObject({ held: true, holder: "report-worker@host-3 pid 4121" });
    const busy = await post(path(name, "acquire"), { ttlMs: 5000, holder: "someone else" });
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({ error: "locked", holder: "report-worker@host-3 pid 4121", expiresAt: grant.expiresAt });
    await post(path(name, "release"), { token: grant.token });
    // Without a label: null, in GET and in the 409.
    const unlabelled = (await post(path(name, "acquire"), { ttlMs: 5000 })).body;
    expect((await get(path(name))).body).toMatchObject({ held: true, holder: null });
    expect((await post(path(name, "acquire"), { ttlMs: 5000 })).body).toMatchObject({
      error: "locked",
      holder: null,
      expiresAt: unlabelled.expiresAt,
    });
  });

  it("a wait that runs out is told who holds it and until when, as a try-lock is", async () => {
    const name = uniqueName("label-wait");
    const grant = (await post(path(name, "acquire"), { ttlMs: 10_000, holder: "long job pid 9" })).body;
    const waited = await post(path(name, "acquire"), { ttlMs: 1000, waitMs: 300 });
    expect(waited.status).toBe(409);
    expect(waited.body).toMatchObject({ error: "locked", holder: "long job pid 9", expiresAt: grant.expiresAt });
    await post(path(name, "release"), { token: grant.token });
  });

  it("a waiter's label comes with the lock it is handed through the line", async () => {
    const name = uniqueName("label-line");
    const first = (await post(path(name, "acquire"), { ttlMs: 10_000, holder: "first" })).body;
    const waiting = post(path(name, "acquire"), { ttlMs: 10_000, waitMs: 20_000, holder: "second, waiting" });
    await eventually(
      () => get(path(name)),
      (r) => r.body.waiters === 1,
    );
    await post(path(name, "release"), { token: first.token });
    const second = await waiting;
    expect(second.status).toBe(200);
    expect((await get(path(name))).body).toMatchObject({ held: true, fence: second.body.fence, holder: "second, waiting" });
  });

  it("a label is user text: markup comes back as the same text, in JSON", async () => {
    const name = uniqueName("label-markup");
    const label = `<img src=x onerror=alert(1)> "quoted" & ünïcode ✓`;
    await post(path(name, "acquire"), { ttlMs: 5000, holder: label });
    const res = await get(path(name));
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.body.holder).toBe(label);
  });

  it("refuses a label that is empty, too long, or has control or format characters, and changes nothing", async () => {
    const name = uniqueName("label-bad");
    for (const holder of ["", "x".repeat(257), "line\nbreak", "bell\u0007", "rtl\u202eoverride", "zero\u200bwidth", 42]) {
      const res = await post(path(name, "acquire"), { ttlMs: 5000, holder });
      expect(res.status, JSON.stringify(holder)).toBe(400);
      expect(res.body.error).toBe("invalid_holder");
    }
    expect((await get(path(name))).body).toMatchObject({ held: false });
    expect((await post(path(name, "acquire"), { ttlMs: 5000, holder: "x".repeat(256) })).status).toBe(200);
  });

  it("an expiry notification carries the vanished holder's label", async () => {
    const name = uniqueName("label-notify");
    const receiver = await newReceiver();
    const holder = (await post(path(name, "acquire"), { ttlMs: 300, onExpire: receiver.url, holder: "nightly-job@host-1" })).body;
    await runAlarmsUntilQuiet(name, "mutex");
    const got = await eventually(
      () => deliveries(receiver.id),
      (d) => d.length > 0,
    );
    expect(JSON.parse(got[0].body)).toMatchObject({ kind: "mutex", name, fence: holder.fence, holderLabel: "nightly-job@host-1" });
  });

  for (const which of ["rwlock", "semaphore"] as const) {
    const base = (name: string) => (which === "rwlock" ? `/v1/rwlocks/${name}/write` : `/v1/semaphores/${name}`);
    const statePath = (name: string) => (which === "rwlock" ? `/v1/rwlocks/${name}` : `/v1/semaphores/${name}`);
    const body = (extra: Record<string, unknown>) => (which === "rwlock" ? { ttlMs: 10_000, ...extra } : { ttlMs: 10_000, limit: 1, ...extra });

    it(`${which}: GET lists the holders' labels, a try-lock turned away is told who holds it, and a waiter's label comes with its grant`, async () => {
      const name = uniqueName(`label-${which}`);
      expect((await get(statePath(name))).body.holderLabels).toEqual([]);
      const first = (await post(`${base(name)}/acquire`, body({ holder: "first holder" }))).body;
      expect((await get(statePath(name))).body.holderLabels).toEqual(["first holder"]);
      const busy = await post(`${base(name)}/acquire`, body({}));
      expect(busy.status).toBe(409);
      expect(busy.body).toMatchObject({ error: "locked", holder: "first holder", expiresAt: first.expiresAt });
      const waiting = post(`${base(name)}/acquire`, body({ waitMs: 20_000, holder: "waiter <b>" }));
      await eventually(
        () => get(statePath(name)),
        (r) => r.body.waiters === 1,
      );
      await post(`${base(name)}/release`, { token: first.token });
      expect((await waiting).status).toBe(200);
      expect((await get(statePath(name))).body.holderLabels).toEqual(["waiter <b>"]);
      const bad = await post(`${base(name)}/acquire`, body({ holder: "tab\there" }));
      expect(bad.status).toBe(400);
      expect(bad.body.error).toBe("invalid_holder");
    });
  }

  it("idempotency: GET shows the owner's label, and a second caller told in_progress learns who works on it and until when", async () => {
    const key = uniqueName("label-idem");
    const started = await post(`/v1/idempotency/${key}/begin`, { ttlMs: 10_000, holder: "webhook-worker-7" });
    expect(started.status).toBe(201);
    expect((await get(`/v1/idempotency/${key}`)).body).toMatchObject({ state: "started", holder: "webhook-worker-7" });
    const second = await post(`/v1/idempotency/${key}/begin`, { ttlMs: 10_000 });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ error: "in_progress", holder: "webhook-worker-7", expiresAt: started.body.expiresAt });
    const bad = await post(`/v1/idempotency/${uniqueName("label-idem-bad")}/begin`, { ttlMs: 10_000, holder: "x".repeat(300) });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("invalid_holder");
  });
}
