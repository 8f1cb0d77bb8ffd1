import { env } from "cloudflare:test";
import { expect, it } from "vitest";
import { namespaceKey, verifyNotification } from "../../../src/wire/signature.js";
import { api, KEY_B, sleep, type StoreKind, uniqueName } from "../../support/workers/api.js";
import { deliveries, eventually, holderIdOfToken, newReceiver, runAlarmsUntilQuiet } from "../../support/workers/lockObjectHelpers.js";

type Mode = "read" | "write";

/**
 * Tracks who the clients believe holds the lock. A client enters after its
 * grant arrived and leaves before it sends its release, so its time inside
 * lies within the store's hold: any overlap seen here is an overlap there.
 */
class RwChecker {
  readers = 0;
  writers = 0;
  maxReaders = 0;
  grants = 0;
  lastFence = Number.NEGATIVE_INFINITY;
  violations: string[] = [];

  enter(mode: Mode, fence: number) {
    this.grants += 1;
    if (mode === "write") {
      if (this.writers > 0) this.violations.push(`two writers (fence ${fence})`);
      if (this.readers > 0) this.violations.push(`a writer beside ${this.readers} reader(s) (fence ${fence})`);
      // Every write grant is a new one: its fence is above every fence handed out before it.
      if (!(fence > this.lastFence)) this.violations.push(`write fence ${fence} not above ${this.lastFence}`);
      this.writers += 1;
    } else {
      if (this.writers > 0) this.violations.push(`a reader beside a writer (fence ${fence})`);
      // A reader shares the fence of readers already in, or gets a new one: never an older one.
      if (!(fence >= this.lastFence)) this.violations.push(`read fence ${fence} below ${this.lastFence}`);
      this.readers += 1;
      this.maxReaders = Math.max(this.maxReaders, this.readers);
    }
    this.lastFence = Math.max(this.lastFence, fence);
  }

  leave(mode: Mode) {
    if (mode === "write") this.writers -= 1;
    else this.readers -= 1;
  }
}

/**
 * Every read-write lock behaviour of the contract (docs/API.md, "Read-write
 * lock"), run against both stores (test/conformance/index.ts).
 */
export function rwLockConformance(kind: StoreKind) {
  const { post, get, call } = api(kind);
  const path = (name: string, op = "") => `/v1/rwlocks/${name}${op ? `/${op}` : ""}`;
  const acquire = (name: string, mode: Mode, body: Record<string, unknown>) => post(path(name, `${mode}/acquire`), body);
  const state = async (name: string) => (await get(path(name))).body;
  const untilWaiters = (name: string, n: number) =>
    eventually(
      () => state(name),
      (s) => s.waiters === n,
    );

  // ---- basics ------------------------------------------------------------------------------

  it("inspect of an unused lock: free, no readers, no writer, no fence, nobody waiting", async () => {
    const name = uniqueName("rw-free");
    const res = await get(path(name));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ name, mode: "free", readers: 0, writer: false, fence: null, holderLabels: [], expiresAt: null, waiters: 0 });
  });

  it("grants a read lock with a token, mode, fence, the store's expiry and count 1", async () => {
    const name = uniqueName("rw-grant-read");
    const before = Date.now();
    const res = await acquire(name, "read", { ttlMs: 5000 });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["count", "expiresAt", "fence", "mode", "name", "token", "ttlMs"]);
    expect(res.body).toMatchObject({ name, mode: "read", ttlMs: 5000, count: 1 });
    expect(res.body.token).toMatch(/^hf_[A-Za-z0-9_-]{24}$/);
    expect(Number.isSafeInteger(res.body.fence)).toBe(true);
    expect(res.body.expiresAt).toBeGreaterThan(before + 4000);
    expect(res.body.expiresAt).toBeLessThan(Date.now() + 6000);
    expect(await state(name)).toEqual({
      name,
      mode: "read",
      readers: 1,
      writer: false,
      fence: res.body.fence,
      holderLabels: [],
      expiresAt: expect.any(Number),
      waiters: 0,
    });
  });

  it("grants a write lock with mode write and count 1", async () => {
    const name = uniqueName("rw-grant-write");
    const res = await acquire(name, "write", { ttlMs: 5000 });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["count", "expiresAt", "fence", "mode", "name", "token", "ttlMs"]);
    expect(res.body).toMatchObject({ name, mode: "write", ttlMs: 5000, count: 1 });
    expect(res.body.token).toMatch(/^hf_[A-Za-z0-9_-]{24}$/);
    expect(await state(name)).toEqual({
      name,
      mode: "write",
      readers: 0,
      writer: true,
      fence: res.body.fence,
      holderLabels: [],
      expiresAt: expect.any(Number),
      waiters: 0,
    });
  });

  it("readers share the lock: each gets its own token, all the same fence", async () => {
    const name = uniqueName("rw-shared");
    const first = (await acquire(name, "read", { ttlMs: 5000 })).body;
    const second = await acquire(name, "read", { ttlMs: 5000 });
    const third = await acquire(name, "read", { ttlMs: 5000 });
    for (const r of [second, third]) {
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ mode: "read", count: 1, fence: first.fence });
    }
    expect(new Set([first.token, second.body.token, third.body.token]).size).toBe(3);
    expect(await state(name)).toMatchObject({ mode: "read", readers: 3, writer: false, fence: first.fence });
  });

  it("many concurrent readers are all granted, with one fence", async () => {
    const name = uniqueName("rw-read-race");
    const results = await Promise.all(Array.from({ length: 10 }, () => acquire(name, "read", { ttlMs: 5000 })));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(new Set(results.map((r) => r.body.fence)).size).toBe(1);
    expect(new Set(results.map((r) => r.body.token)).size).toBe(10);
    expect(await state(name)).toMatchObject({ mode: "read", readers: 10, writer: false });
  });

  it("grants exactly one of many concurrent writers", async () => {
    const name = uniqueName("rw-write-race");
    const results = await Promise.all(Array.from({ length: 20 }, () => acquire(name, "write", { ttlMs: 5000 })));
    const granted = results.filter((r) => r.status === 200);
    expect(granted).toHaveLength(1);
    for (const r of results.filter((r) => r.status !== 200)) {
      expect(r.status).toBe(409);
      expect(r.body.error).toBe("locked");
    }
    expect(await state(name)).toMatchObject({ mode: "write", writer: true, readers: 0, fence: granted[0].body.fence });
  });

  it("a writer excludes readers and writers: 409 locked with retryAfterMs and Retry-After", async () => {
    const name = uniqueName("rw-exclusive");
    const writer = (await acquire(name, "write", { ttlMs: 3000 })).body;
    for (const mode of ["read", "write"] as const) {
      const res = await acquire(name, mode, { ttlMs: 1000 });
      expect(res.status).toBe(409);
      expect(res.body.error).toBe("locked");
      expect(res.body.retryAfterMs).toBeGreaterThan(0);
      expect(res.body.retryAfterMs).toBeLessThanOrEqual(3000);
      expect(res.headers.get("retry-after")).toBe(String(Math.ceil(res.body.retryAfterMs / 1000)));
    }
    expect(await state(name)).toEqual({
      name,
      mode: "write",
      readers: 0,
      writer: true,
      fence: writer.fence,
      holderLabels: [],
      expiresAt: expect.any(Number),
      waiters: 0,
    });
  });

  it("readers exclude a writer until the last of them releases", async () => {
    const name = uniqueName("rw-readers-block");
    const a = (await acquire(name, "read", { ttlMs: 5000 })).body;
    const b = (await acquire(name, "read", { ttlMs: 5000 })).body;
    const refused = await acquire(name, "write", { ttlMs: 1000 });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe("locked");
    expect((await post(path(name, "read/release"), { token: a.token })).body).toEqual({ released: true, mode: "read", count: 0 });
    expect((await acquire(name, "write", { ttlMs: 1000 })).status).toBe(409);
    expect((await post(path(name, "read/release"), { token: b.token })).body).toEqual({ released: true, mode: "read", count: 0 });
    expect((await state(name)).mode).toBe("free");
    const writer = await acquire(name, "write", { ttlMs: 1000 });
    expect(writer.status).toBe(200);
    expect(writer.body.fence).toBeGreaterThan(a.fence);
  });

  it("a reader re-enters its read: count grows, fence stays, release unwinds by depth", async () => {
    const name = uniqueName("rw-read-reenter");
    const first = (await acquire(name, "read", { ttlMs: 5000 })).body;
    const again = await acquire(name, "read", { ttlMs: 8000, token: first.token });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ token: first.token, mode: "read", fence: first.fence, count: 2, ttlMs: 8000 });
    expect(await state(name)).toMatchObject({ mode: "read", readers: 1 }); // one holder, twice
    expect((await post(path(name, "read/release"), { token: first.token })).body).toEqual({ released: false, mode: "read", count: 1 });
    expect(await state(name)).toMatchObject({ mode: "read", readers: 1 });
    expect((await post(path(name, "read/release"), { token: first.token })).body).toEqual({ released: true, mode: "read", count: 0 });
    expect(await state(name)).toMatchObject({ mode: "free", readers: 0, writer: false });
    const third = await post(path(name, "read/release"), { token: first.token });
    expect(third.status).toBe(409);
    expect(third.body.error).toBe("lease_lost");
  });

  it("a writer re-enters its write (count 2, same fence) and unwinds by depth", async () => {
    const name = uniqueName("rw-write-reenter");
    const first = (await acquire(name, "write", { ttlMs: 5000 })).body;
    const again = await acquire(name, "write", { ttlMs: 8000, token: first.token });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ token: first.token, mode: "write", fence: first.fence, count: 2, ttlMs: 8000 });
    expect((await post(path(name, "write/release"), { token: first.token })).body).toEqual({ released: false, mode: "write", count: 1 });
    expect(await state(name)).toMatchObject({ mode: "write", writer: true, fence: first.fence });
    expect((await acquire(name, "read", { ttlMs: 1000 })).status).toBe(409);
    expect((await post(path(name, "write/release"), { token: first.token })).body).toEqual({ released: true, mode: "write", count: 0 });
    expect(await state(name)).toMatchObject({ mode: "free", writer: false, readers: 0 });
  });

  it("downgrade: a writer takes a read with its own token, releases the write, keeps the read; readers may join", async () => {
    const name = uniqueName("rw-downgrade");
    const w = (await acquire(name, "write", { ttlMs: 5000 })).body;
    const read = await acquire(name, "read", { ttlMs: 5000, token: w.token });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ token: w.token, mode: "read", fence: w.fence, count: 1 });
    // Still writing: nobody else gets in.
    expect(await state(name)).toMatchObject({ mode: "write", writer: true, readers: 1, fence: w.fence });
    expect((await acquire(name, "read", { ttlMs: 1000 })).status).toBe(409);

    expect((await post(path(name, "write/release"), { token: w.token })).body).toEqual({ released: false, mode: "write", count: 0 });
    expect(await state(name)).toMatchObject({ mode: "read", writer: false, readers: 1, fence: w.fence });
    // Now a reader: other readers join it (sharing its fence), writers are kept out.
    const other = await acquire(name, "read", { ttlMs: 5000 });
    expect(other.status).toBe(200);
    expect(other.body.fence).toBe(w.fence);
    expect((await acquire(name, "write", { ttlMs: 1000 })).status).toBe(409);
    expect(await state(name)).toMatchObject({ mode: "read", readers: 2, writer: false });

    expect((await post(path(name, "read/release"), { token: w.token })).body).toEqual({ released: true, mode: "read", count: 0 });
    expect((await post(path(name, "read/release"), { token: other.body.token })).body).toEqual({ released: true, mode: "read", count: 0 });
    expect((await state(name)).mode).toBe("free");
  });

  it("downgrade while a writer waits: the waiting writer keeps waiting until the downgraded read is released", async () => {
    const name = uniqueName("rw-downgrade-wait");
    const w = (await acquire(name, "write", { ttlMs: 10_000 })).body;
    await acquire(name, "read", { ttlMs: 10_000, token: w.token });
    let settled = false;
    const waiting = acquire(name, "write", { ttlMs: 5000, waitMs: 15_000 }).then((r) => {
      settled = true;
      return r;
    });
    await untilWaiters(name, 1);
    await post(path(name, "write/release"), { token: w.token });
    expect(await state(name)).toMatchObject({ mode: "read", readers: 1, writer: false, waiters: 1 });
    // No barging past the waiting writer, not even by a reader the read mode would admit.
    const reader = await acquire(name, "read", { ttlMs: 1000 });
    expect(reader.status).toBe(409);
    expect(reader.body.error).toBe("locked");
    expect(settled).toBe(false);
    await post(path(name, "read/release"), { token: w.token });
    const granted = await waiting;
    expect(granted.status).toBe(200);
    expect(granted.body.mode).toBe("write");
    expect(granted.body.fence).toBeGreaterThan(w.fence);
    expect(await state(name)).toMatchObject({ mode: "write", writer: true, readers: 0, waiters: 0, fence: granted.body.fence });
  });

  it("upgrade refused: a token holding only a read asking for the write is 409 upgrade_not_supported and changes nothing", async () => {
    const name = uniqueName("rw-upgrade");
    const r = (await acquire(name, "read", { ttlMs: 5000 })).body;
    const before = await state(name);
    const res = await acquire(name, "write", { ttlMs: 5000, token: r.token });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe("upgrade_not_supported");
    expect(typeof res.body.message).toBe("string");
    expect(await state(name)).toEqual(before);
    // The read hold is untouched: one release frees it.
    expect((await post(path(name, "release"), { token: r.token })).body).toEqual({ released: true, mode: "read", count: 0 });
  });

  it("re-entry with a token that holds nothing (released, or never issued) is lease_lost, not a new grant", async () => {
    const name = uniqueName("rw-stale-reenter");
    const r = (await acquire(name, "read", { ttlMs: 5000 })).body;
    await post(path(name, "release"), { token: r.token });
    for (const mode of ["read", "write"] as const) {
      for (const token of [r.token, "hf_AAAAAAAAAAAAAAAAAAAAAAAA"]) {
        const res = await acquire(name, mode, { ttlMs: 5000, token });
        expect(res.status).toBe(409);
        expect(res.body.error).toBe("lease_lost");
      }
    }
    expect(await state(name)).toMatchObject({ mode: "free", readers: 0, writer: false });
  });

  it("mode-less release drops the write hold first, then the read hold", async () => {
    const name = uniqueName("rw-release-any");
    const w = (await acquire(name, "write", { ttlMs: 5000 })).body;
    await acquire(name, "read", { ttlMs: 5000, token: w.token });
    expect((await post(path(name, "release"), { token: w.token })).body).toEqual({ released: false, mode: "write", count: 0 });
    expect(await state(name)).toMatchObject({ mode: "read", writer: false, readers: 1 });
    expect((await post(path(name, "release"), { token: w.token })).body).toEqual({ released: true, mode: "read", count: 0 });
    expect((await state(name)).mode).toBe("free");
    const again = await post(path(name, "release"), { token: w.token });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("lease_lost");
  });

  it("releasing a mode the token does not hold is lease_lost and keeps its other hold", async () => {
    const name = uniqueName("rw-release-wrong-mode");
    const w = (await acquire(name, "write", { ttlMs: 5000 })).body;
    const asReader = await post(path(name, "read/release"), { token: w.token });
    expect(asReader.status).toBe(409);
    expect(asReader.body.error).toBe("lease_lost");
    expect(await state(name)).toMatchObject({ mode: "write", writer: true, fence: w.fence });

    const other = uniqueName("rw-release-wrong-mode-r");
    const r = (await acquire(other, "read", { ttlMs: 5000 })).body;
    const asWriter = await post(path(other, "write/release"), { token: r.token });
    expect(asWriter.status).toBe(409);
    expect(asWriter.body.error).toBe("lease_lost");
    expect(await state(other)).toMatchObject({ mode: "read", readers: 1 });
  });

  it("release and heartbeat with an unknown token are lease_lost on every path and change nothing", async () => {
    const name = uniqueName("rw-wrong-token");
    const r = (await acquire(name, "read", { ttlMs: 5000 })).body;
    const before = await state(name);
    const bad = "hf_AAAAAAAAAAAAAAAAAAAAAAAA";
    for (const op of ["read/release", "write/release", "release", "read/heartbeat", "write/heartbeat", "heartbeat"]) {
      const res = await post(path(name, op), { token: bad, ...(op.endsWith("heartbeat") ? { ttlMs: 60_000 } : {}) });
      expect(res.status, op).toBe(409);
      expect(res.body.error, op).toBe("lease_lost");
    }
    expect(await state(name)).toEqual(before);
    expect(before).toMatchObject({ mode: "read", readers: 1, fence: r.fence });
  });

  it("heartbeat on every path extends the lease from the store's now, by default by the acquire's ttl", async () => {
    const name = uniqueName("rw-hb");
    const w = (await acquire(name, "write", { ttlMs: 1000 })).body;
    await sleep(50);
    const hb = await post(path(name, "write/heartbeat"), { token: w.token });
    expect(hb.status).toBe(200);
    expect(Object.keys(hb.body).sort()).toEqual(["expiresAt", "fence", "ttlMs"]);
    expect(hb.body).toMatchObject({ ttlMs: 1000, fence: w.fence });
    expect(hb.body.expiresAt).toBeGreaterThan(w.expiresAt);
    const longer = await post(path(name, "heartbeat"), { token: w.token, ttlMs: 20_000 });
    expect(longer.status).toBe(200);
    expect(longer.body).toMatchObject({ ttlMs: 20_000, fence: w.fence });
    expect(longer.body.expiresAt).toBeGreaterThan(w.expiresAt + 15_000);

    const other = uniqueName("rw-hb-read");
    const r = (await acquire(other, "read", { ttlMs: 1000 })).body;
    const rhb = await post(path(other, "read/heartbeat"), { token: r.token, ttlMs: 30_000 });
    expect(rhb.status).toBe(200);
    expect(rhb.body).toMatchObject({ ttlMs: 30_000, fence: r.fence });
    expect(rhb.body.expiresAt).toBeGreaterThan(r.expiresAt + 25_000);
  });

  it("a heartbeat keeps a short-lived reader holding past its first TTL; without it the lease lapses", async () => {
    const name = uniqueName("rw-hb-keeps");
    // A TTL long enough for the second acquire and the heartbeat to land inside it on a busy machine.
    const kept = (await acquire(name, "read", { ttlMs: 1000 })).body;
    const lapsing = (await acquire(name, "read", { ttlMs: 1000 })).body;
    expect((await post(path(name, "read/heartbeat"), { token: kept.token, ttlMs: 8000 })).status).toBe(200);
    const s = await eventually(
      () => state(name),
      (v) => v.readers === 1,
      6000,
    );
    expect(s).toMatchObject({ mode: "read", readers: 1 });
    expect(Date.now()).toBeGreaterThanOrEqual(lapsing.expiresAt - 100); // it lapsed at its TTL, not before
    expect((await acquire(name, "write", { ttlMs: 1000 })).status).toBe(409);
    const gone = await post(path(name, "read/heartbeat"), { token: lapsing.token });
    expect(gone.status).toBe(409);
    expect(gone.body.error).toBe("lease_lost");
    expect((await post(path(name, "read/release"), { token: kept.token })).body).toEqual({ released: true, mode: "read", count: 0 });
  });

  it("inspect never reveals a token", async () => {
    const name = uniqueName("rw-inspect");
    const a = (await acquire(name, "read", { ttlMs: 5000 })).body;
    const b = (await acquire(name, "read", { ttlMs: 5000 })).body;
    const readState = await get(path(name));
    expect(readState.status).toBe(200);
    expect(Object.keys(readState.body).sort()).toEqual(["expiresAt", "fence", "holderLabels", "mode", "name", "readers", "waiters", "writer"]);
    for (const t of [a.token, b.token]) expect(JSON.stringify(readState.body)).not.toContain(t);
    await post(path(name, "release"), { token: a.token });
    await post(path(name, "release"), { token: b.token });
    const w = (await acquire(name, "write", { ttlMs: 5000 })).body;
    await acquire(name, "read", { ttlMs: 5000, token: w.token });
    const writeState = await get(path(name));
    expect(writeState.body).toMatchObject({ mode: "write", writer: true, readers: 1, fence: w.fence });
    expect(JSON.stringify(writeState.body)).not.toContain(w.token);
    expect(JSON.stringify(writeState.body)).not.toContain("hf_");
  });

  it("fences: every write grant and every read grant from a free lock is a new, larger fence; joining readers share it", async () => {
    const name = uniqueName("rw-fence");
    const fences: number[] = [];
    const r1 = (await acquire(name, "read", { ttlMs: 5000 })).body;
    const r2 = (await acquire(name, "read", { ttlMs: 5000 })).body;
    expect(r2.fence).toBe(r1.fence);
    fences.push(r1.fence);
    await post(path(name, "release"), { token: r1.token });
    const r3 = (await acquire(name, "read", { ttlMs: 5000 })).body; // joins r2, still holding
    expect(r3.fence).toBe(r1.fence);
    await post(path(name, "release"), { token: r2.token });
    await post(path(name, "release"), { token: r3.token });
    for (let i = 0; i < 3; i++) {
      const w = (await acquire(name, "write", { ttlMs: 5000 })).body;
      fences.push(w.fence);
      await post(path(name, "release"), { token: w.token });
      const r = (await acquire(name, "read", { ttlMs: 5000 })).body; // from a free lock
      fences.push(r.fence);
      await post(path(name, "release"), { token: r.token });
    }
    // A lapsed lease, then a new grant: still larger.
    const short = (await acquire(name, "write", { ttlMs: 100 })).body;
    fences.push(short.fence);
    await sleep(250);
    const after = await acquire(name, "read", { ttlMs: 5000 });
    expect(after.status).toBe(200);
    fences.push(after.body.fence);
    for (let i = 1; i < fences.length; i++) expect(fences[i]).toBeGreaterThan(fences[i - 1]);
    expect((await state(name)).fence).toBe(after.body.fence);
  });

  it("an expired holder cannot release or extend the next holder's lock", async () => {
    const name = uniqueName("rw-expired");
    const old = (await acquire(name, "write", { ttlMs: 100 })).body;
    await sleep(250);
    const next = (await acquire(name, "write", { ttlMs: 5000 })).body;
    expect(next.token).not.toBe(old.token);
    for (const op of ["write/release", "release", "heartbeat"]) {
      const res = await post(path(name, op), { token: old.token });
      expect(res.status).toBe(409);
      expect(res.body.error).toBe("lease_lost");
    }
    expect(await state(name)).toMatchObject({ mode: "write", writer: true, fence: next.fence });
  });

  it("keeps namespaces apart: another key can neither see nor release your lock", async () => {
    const name = uniqueName("rw-tenant");
    const mine = (await acquire(name, "write", { ttlMs: 5000 })).body;
    expect((await get(path(name), { key: KEY_B })).body).toMatchObject({ mode: "free", writer: false, readers: 0 });
    const theirs = await post(path(name, "release"), { token: mine.token }, { key: KEY_B });
    expect(theirs.status).toBe(409);
    expect(theirs.body.error).toBe("lease_lost");
    expect((await post(path(name, "write/acquire"), { ttlMs: 5000 }, { key: KEY_B })).status).toBe(200);
    expect(await state(name)).toMatchObject({ mode: "write", writer: true, fence: mine.fence });
  });

  // ---- waiting -----------------------------------------------------------------------------

  it("a waiting writer is granted once the readers release; waitMs that runs out is 409 locked and leaves the line", async () => {
    const name = uniqueName("rw-wait");
    const r = (await acquire(name, "read", { ttlMs: 10_000 })).body;
    const timedOut = await acquire(name, "write", { ttlMs: 5000, waitMs: 300 });
    expect(timedOut.status).toBe(409);
    expect(timedOut.body.error).toBe("locked");
    expect(timedOut.body.retryAfterMs).toBeGreaterThan(0);
    expect((await state(name)).waiters).toBe(0);
    const waiting = acquire(name, "write", { ttlMs: 5000, waitMs: 15_000 });
    await untilWaiters(name, 1);
    await post(path(name, "release"), { token: r.token });
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(res.body.mode).toBe("write");
    expect(res.body.fence).toBeGreaterThan(r.fence);
    expect(await state(name)).toMatchObject({ mode: "write", waiters: 0 });
  });

  it("a reader that vanishes blocks a waiting writer only until its own TTL", async () => {
    const name = uniqueName("rw-vanish");
    const staying = (await acquire(name, "read", { ttlMs: 10_000 })).body;
    // Never released; its TTL outlasts the steps up to the state read below on any machine, so that read
    // always sees it still holding (checked, not assumed).
    const vanishing = (await acquire(name, "read", { ttlMs: 3000 })).body;
    let grantedAt = 0;
    const waiting = acquire(name, "write", { ttlMs: 5000, waitMs: 15_000 }).then((r) => {
      grantedAt = Date.now();
      return r;
    });
    await untilWaiters(name, 1);
    // The other reader leaves properly; the vanished one still holds.
    expect((await post(path(name, "release"), { token: staying.token })).body.released).toBe(true);
    const s = await state(name);
    expect(Date.now(), "the state was read before the vanished reader's lease could end").toBeLessThan(vanishing.expiresAt - 100);
    expect(s).toMatchObject({ mode: "read", readers: 1, writer: false, waiters: 1 });
    expect(grantedAt).toBe(0);
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(res.body.mode).toBe("write");
    // The grant's own store time (expiresAt - ttlMs) against the vanished reader's expiry, both by the store's clock.
    const grantedByStore = res.body.expiresAt - res.body.ttlMs;
    expect(grantedByStore).toBeGreaterThanOrEqual(vanishing.expiresAt - 50);
    expect(grantedByStore).toBeLessThan(vanishing.expiresAt + 2000);
    expect(res.body.fence).toBeGreaterThan(vanishing.fence);
  });

  it("no writer starvation: a stream of readers never keeps a waiting writer out", async () => {
    const name = uniqueName("rw-stream");
    const events: string[] = [];
    // Overlapping readers: were each new one let in beside the others, the lock would never be free.
    const current = (await acquire(name, "read", { ttlMs: 10_000 })).body;
    const other = (await acquire(name, "read", { ttlMs: 10_000 })).body;
    const writer = acquire(name, "write", { ttlMs: 10_000, waitMs: 15_000 }).then((r) => {
      events.push("writer");
      return r;
    });
    await untilWaiters(name, 1);
    const queuedReaders: Array<Promise<any>> = [];
    for (let i = 0; i < 5; i++) {
      if (i === 2) {
        // One of the readers leaves; the other still holds, so the writer still waits.
        await post(path(name, "release"), { token: other.token });
        expect(await state(name)).toMatchObject({ mode: "read", readers: 1, writer: false });
      }
      // A try-lock reader arriving while the writer waits is refused, though only readers hold.
      const tryRead = await acquire(name, "read", { ttlMs: 10_000 });
      expect(tryRead.status).toBe(409);
      expect(tryRead.body.error).toBe("locked");
      // A waiting reader queues behind the writer.
      queuedReaders.push(
        acquire(name, "read", { ttlMs: 10_000, waitMs: 15_000 }).then((r) => {
          events.push(`reader${i}`);
          return r;
        }),
      );
      await untilWaiters(name, 2 + i);
      expect(events).toEqual([]);
    }
    expect(await state(name)).toMatchObject({ mode: "read", readers: 1, waiters: 6 });
    await post(path(name, "release"), { token: current.token });
    const w = await writer;
    expect(w.status).toBe(200);
    expect(w.body.fence).toBeGreaterThan(current.fence);
    expect(await state(name)).toMatchObject({ mode: "write", writer: true, readers: 0, waiters: 5 });
    expect(events).toEqual(["writer"]);
    await post(path(name, "release"), { token: w.body.token });
    const readers = await Promise.all(queuedReaders);
    for (const r of readers) {
      expect(r.status).toBe(200);
      expect(r.body.fence).toBeGreaterThan(w.body.fence);
    }
    expect(events[0]).toBe("writer");
    expect(await state(name)).toMatchObject({ mode: "read", readers: 5, waiters: 0 });
  });

  it("a released writer lets every reader queued before the next writer in together; that writer then waits for them", async () => {
    const name = uniqueName("rw-batch");
    const w1 = (await acquire(name, "write", { ttlMs: 10_000 })).body;
    const settled = new Set<string>();
    const wait = (label: string, mode: Mode) =>
      acquire(name, mode, { ttlMs: 10_000, waitMs: 15_000 }).then((r) => {
        settled.add(label);
        return r;
      });
    const early = [];
    for (let i = 0; i < 3; i++) {
      early.push(wait(`r${i}`, "read"));
      await untilWaiters(name, i + 1);
    }
    const w2 = wait("w2", "write");
    await untilWaiters(name, 4);
    const late = wait("late", "read");
    await untilWaiters(name, 5);

    await post(path(name, "write/release"), { token: w1.token });
    // The first state with readers in it already has all three: they are granted together.
    const first = await eventually(
      () => state(name),
      (s) => s.readers > 0,
    );
    expect(first).toMatchObject({ mode: "read", readers: 3, writer: false });
    // `waiters` is the lock object's count, read beside the store's state: it catches up
    // once the object has taken the store's answer (the Redis store grants in the script).
    expect(
      await eventually(
        () => state(name),
        (s) => s.waiters === 2,
      ),
    ).toMatchObject({ mode: "read", readers: 3, waiters: 2 });
    const readers = await Promise.all(early);
    for (const r of readers) {
      expect(r.status).toBe(200);
      expect(r.body.mode).toBe("read");
      expect(r.body.fence).toBe(readers[0].body.fence); // one read grant from a free lock
    }
    expect(readers[0].body.fence).toBeGreaterThan(w1.fence);
    expect(settled.has("w2")).toBe(false);
    expect(settled.has("late")).toBe(false);

    // The writer waits for the last of them; the late reader stays behind the writer.
    await post(path(name, "release"), { token: readers[0].body.token });
    await post(path(name, "release"), { token: readers[1].body.token });
    expect(await state(name)).toMatchObject({ mode: "read", readers: 1, waiters: 2 });
    expect(settled.has("w2")).toBe(false);
    await post(path(name, "release"), { token: readers[2].body.token });
    const writer = await w2;
    expect(writer.status).toBe(200);
    expect(writer.body.fence).toBeGreaterThan(readers[0].body.fence);
    expect(await state(name)).toMatchObject({ mode: "write", writer: true, readers: 0, waiters: 1 });
    expect(settled.has("late")).toBe(false);

    await post(path(name, "release"), { token: writer.body.token });
    const last = await late;
    expect(last.status).toBe(200);
    expect(last.body.fence).toBeGreaterThan(writer.body.fence);
    expect(await state(name)).toMatchObject({ mode: "read", readers: 1, waiters: 0 });
  });

  it("a writer's lapse (no release) admits the readers waiting behind it", async () => {
    const name = uniqueName("rw-writer-lapse");
    const w = (await acquire(name, "write", { ttlMs: 600 })).body; // never released
    const waiting = [acquire(name, "read", { ttlMs: 5000, waitMs: 15_000 })];
    await untilWaiters(name, 1);
    waiting.push(acquire(name, "read", { ttlMs: 5000, waitMs: 15_000 }));
    await untilWaiters(name, 2);
    const granted = await Promise.all(waiting);
    for (const r of granted) {
      expect(r.status).toBe(200);
      expect(r.body.expiresAt - r.body.ttlMs).toBeGreaterThanOrEqual(w.expiresAt - 50);
      expect(r.body.expiresAt - r.body.ttlMs).toBeLessThan(w.expiresAt + 2000);
    }
    expect(granted[1].body.fence).toBe(granted[0].body.fence);
    expect(await state(name)).toMatchObject({ mode: "read", readers: 2, writer: false, waiters: 0 });
  });

  it("a waiter whose wait runs out while the line's store step grants it holds nothing: the grant is taken back", async () => {
    const receiver = await newReceiver();
    for (const mode of ["write", "read"] as const) {
      const name = uniqueName("rw-left");
      // onExpire sends even a free lock's acquire through the lock object's line, as its first (fresh) waiter;
      // a 1 ms wait runs out while the store step that grants it is under way (on Redis, a round trip).
      const res = await acquire(name, mode, { ttlMs: 30_000, waitMs: 1, onExpire: receiver.url });
      if (res.status === 200) {
        // Granted in time (the Durable store's step runs in memory): then it holds, as answered, and its token releases it.
        expect(await state(name)).toMatchObject({ mode, fence: res.body.fence });
        expect((await post(path(name, "release"), { token: res.body.token })).body).toMatchObject({ released: true, mode });
        expect((await state(name)).mode).toBe("free");
        continue;
      }
      expect(res.status).toBe(409);
      // Nobody knows that grant's token: the lock must be free again at once, not after 30 s.
      expect(
        (
          await eventually(
            () => state(name),
            (s) => s.mode === "free",
            3000,
          )
        ).mode,
      ).toBe("free");
      // Usable again: a waiting acquire gets it (a try-lock may still be held back by the registration grace).
      expect((await acquire(name, "write", { ttlMs: 1000, waitMs: 2000 })).status).toBe(200);
    }
  });

  it("a reader re-entering with its token is not queued behind a waiting writer", async () => {
    const name = uniqueName("rw-reenter-waiting");
    const r = (await acquire(name, "read", { ttlMs: 10_000 })).body;
    const writer = acquire(name, "write", { ttlMs: 5000, waitMs: 15_000 });
    await untilWaiters(name, 1);
    const again = await acquire(name, "read", { ttlMs: 10_000, token: r.token });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ count: 2, fence: r.fence });
    await post(path(name, "release"), { token: r.token });
    expect(await state(name)).toMatchObject({ mode: "read", readers: 1, waiters: 1 });
    await post(path(name, "release"), { token: r.token });
    expect((await writer).status).toBe(200);
  });

  it("8 clients looping acquire (read or write) -> check -> release never see a reader beside a writer or two writers", async () => {
    const name = uniqueName("rw-contention");
    const checker = new RwChecker();
    let reads = 0;
    let writes = 0;
    const client = async (c: number) => {
      for (let i = 0; i < 4; i++) {
        const mode: Mode = (c + i) % 3 === 0 ? "write" : "read";
        const g = await acquire(name, mode, { ttlMs: 10_000, waitMs: 30_000 });
        expect(g.status).toBe(200);
        expect(g.body.mode).toBe(mode);
        checker.enter(mode, g.body.fence);
        if (mode === "write") writes += 1;
        else reads += 1;
        await sleep(Math.random() * 8);
        checker.leave(mode);
        const rel = await post(path(name, `${mode}/release`), { token: g.body.token });
        expect(rel.status).toBe(200);
        expect(rel.body).toEqual({ released: true, mode, count: 0 });
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, c) => client(c)));
    expect(checker.violations).toEqual([]);
    expect(checker.grants).toBe(32);
    expect(writes).toBeGreaterThan(0);
    expect(reads).toBeGreaterThan(0);
    expect(await state(name)).toMatchObject({ mode: "free", readers: 0, writer: false, waiters: 0 });
  });

  // ---- expiry notifications ----------------------------------------------------------------

  it("posts a signed expiry notification when a holder vanishes, and none for a holder that released", async () => {
    const name = uniqueName("rw-notify");
    const receiver = await newReceiver();
    // 1 s leases: the two must overlap to share a fence, and the second's release must come before its end (300 ms
    // lapsed before it on a loaded runner, CI after 8cec41d).
    const vanished = (await acquire(name, "read", { ttlMs: 1000, onExpire: receiver.url })).body;
    const released = (await acquire(name, "read", { ttlMs: 1000, onExpire: receiver.url })).body;
    expect(vanished.fence).toBe(released.fence);
    expect((await post(path(name, "release"), { token: released.token })).body.released).toBe(true);
    await sleep(Math.max(0, vanished.expiresAt - Date.now()) + 50);
    await runAlarmsUntilQuiet(name, "rwlock");
    const got = await eventually(
      () => deliveries(receiver.id),
      (d) => d.length > 0,
      5000,
    );
    expect(got).toHaveLength(1);
    expect(JSON.parse(got[0].body)).toEqual({
      kind: "rwlock",
      namespace: "tenant-a",
      name,
      fence: vanished.fence,
      holder: await holderIdOfToken(vanished.token),
      expiredAt: vanished.expiresAt,
    });
    expect(got[0].body).not.toContain(vanished.token);
    expect(got[0].signature).toMatch(/^t=\d+,v1=[0-9a-f]{64},v2=[0-9a-f]{64}$/);
    expect(
      await verifyNotification({ body: got[0].body, signature: got[0].signature, key: await namespaceKey(env.WEBHOOK_SECRET!, "tenant-a") }),
    ).not.toBeNull();
    // Nothing more comes (the released reader is never reported).
    await runAlarmsUntilQuiet(name, "rwlock");
    expect(await deliveries(receiver.id)).toHaveLength(1);
  });

  it("a writer that vanishes is reported with its fence", async () => {
    const name = uniqueName("rw-notify-writer");
    const receiver = await newReceiver();
    const w = (await acquire(name, "write", { ttlMs: 300, onExpire: receiver.url })).body;
    expect(w.mode).toBe("write");
    await sleep(Math.max(0, w.expiresAt - Date.now()) + 50);
    await runAlarmsUntilQuiet(name, "rwlock");
    const got = await eventually(
      () => deliveries(receiver.id),
      (d) => d.length > 0,
      5000,
    );
    expect(got.map((d) => JSON.parse(d.body))).toEqual([
      { kind: "rwlock", namespace: "tenant-a", name, fence: w.fence, holder: await holderIdOfToken(w.token), expiredAt: w.expiresAt },
    ]);
  });

  it("readers that vanish together share a fence, yet each notification names its holder: deduplicating by (name, fence, holder) keeps them all", async () => {
    const name = uniqueName("rw-notify-readers");
    const receiver = await newReceiver();
    const readers = [];
    // 1 s leases: the three must overlap to share a fence, and 300 ms lapsed before the third came on a busy runner.
    for (let i = 0; i < 3; i++) readers.push((await acquire(name, "read", { ttlMs: 1000, onExpire: receiver.url })).body);
    expect(new Set(readers.map((r) => r.fence)).size).toBe(1);
    await sleep(Math.max(...readers.map((r) => r.expiresAt - Date.now()), 0) + 50);
    await runAlarmsUntilQuiet(name, "rwlock");
    const got = await eventually(
      () => deliveries(receiver.id),
      (d) => d.length >= 3,
      5000,
    );
    const bodies = got.map((d) => JSON.parse(d.body));
    // What a receiver following docs/API.md keeps: one per (name, fence, holder).
    const kept = new Map(bodies.map((b) => [`${b.name}|${b.fence}|${b.holder}`, b]));
    expect(kept.size).toBe(3);
    const ids = await Promise.all(readers.map((r) => holderIdOfToken(r.token)));
    expect([...kept.values()].map((b) => b.holder).sort()).toEqual([...ids].sort());
    for (const b of bodies) expect(b).toMatchObject({ kind: "rwlock", name, fence: readers[0].fence });
  });

  // ---- bad input ---------------------------------------------------------------------------

  const badAcquires: Array<[string, unknown, string, string?]> = [
    ["missing ttlMs", {}, "invalid_ttl", "ttlMs"],
    ["ttlMs below 100", { ttlMs: 99 }, "invalid_ttl", "ttlMs"],
    ["ttlMs above a day", { ttlMs: 86_400_001 }, "invalid_ttl", "ttlMs"],
    ["ttlMs not an integer", { ttlMs: 1000.5 }, "invalid_ttl", "ttlMs"],
    ["ttlMs as a string", { ttlMs: "1000" }, "invalid_ttl", "ttlMs"],
    ["waitMs above 60 s", { ttlMs: 1000, waitMs: 60_001 }, "invalid_wait", "waitMs"],
    ["negative waitMs", { ttlMs: 1000, waitMs: -1 }, "invalid_wait", "waitMs"],
    ["waitMs not an integer", { ttlMs: 1000, waitMs: 1.5 }, "invalid_wait", "waitMs"],
    ["token of the wrong type", { ttlMs: 1000, token: 5 }, "invalid_token", "token"],
    ["an empty token", { ttlMs: 1000, token: "" }, "invalid_token", "token"],
    ["unknown field", { ttlMs: 1000, colour: "red" }, "invalid_body", "colour"],
    ["a semaphore's field", { ttlMs: 1000, limit: 3 }, "invalid_body", "limit"],
    ["an array", [1000], "invalid_body"],
    ["null", null, "invalid_body"],
    ["onExpire not a URL", { ttlMs: 1000, onExpire: "not a url" }, "invalid_on_expire", "onExpire"],
  ];

  for (const mode of ["read", "write"] as const) {
    for (const [label, body, code, names] of badAcquires) {
      it(`${mode} acquire with ${label} is 400 ${code} and changes nothing`, async () => {
        const name = uniqueName("rw-bad");
        const holder = (await acquire(name, "read", { ttlMs: 10_000 })).body;
        const before = await state(name);
        const res = await post(path(name, `${mode}/acquire`), body);
        expect(res.status).toBe(400);
        expect(res.body.error).toBe(code);
        expect(typeof res.body.message).toBe("string");
        if (names) expect(res.body.message).toContain(names);
        expect(await state(name)).toEqual(before);
        expect(before).toMatchObject({ mode: "read", readers: 1, fence: holder.fence });
      });
    }
  }

  it("broken JSON is 400 invalid_body and changes nothing", async () => {
    const name = uniqueName("rw-json");
    await acquire(name, "read", { ttlMs: 10_000 });
    const before = await state(name);
    const res = await call("POST", path(name, "write/acquire"), undefined, { raw: '{"ttlMs": 10' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("invalid_body");
    expect(await state(name)).toEqual(before);
  });

  it("heartbeat and release need a token; a bad heartbeat ttl or an unknown field is a 400; nothing changes", async () => {
    const name = uniqueName("rw-bad-hb");
    const held = (await acquire(name, "write", { ttlMs: 10_000 })).body;
    const before = await state(name);
    for (const op of ["read/heartbeat", "write/heartbeat", "heartbeat", "read/release", "write/release", "release"]) {
      const none = await post(path(name, op), {});
      expect(none.status, op).toBe(400);
      expect(none.body.error, op).toBe("invalid_token");
      const wrongType = await post(path(name, op), { token: 42 });
      expect(wrongType.status, op).toBe(400);
      expect(wrongType.body.error, op).toBe("invalid_token");
      const extra = await post(path(name, op), { token: held.token, mode: "write" });
      expect(extra.status, op).toBe(400);
      expect(extra.body.error, op).toBe("invalid_body");
      expect(extra.body.message, op).toContain("mode");
    }
    for (const op of ["read/heartbeat", "write/heartbeat", "heartbeat"]) {
      const res = await post(path(name, op), { token: held.token, ttlMs: 50 });
      expect(res.status, op).toBe(400);
      expect(res.body.error, op).toBe("invalid_ttl");
    }
    expect(await state(name)).toEqual(before);
    // The writer still holds, with its lease untouched by the refused heartbeats.
    const hb = (await post(path(name, "heartbeat"), { token: held.token })).body;
    expect(hb).toMatchObject({ ttlMs: 10_000, fence: held.fence });
  });

  it("an unknown mode is 404 and a bad name is 400 invalid_name", async () => {
    const name = uniqueName("rw-bad-path");
    const upgrade = await post(path(name, "upgrade/acquire"), { ttlMs: 1000 });
    expect(upgrade.status).toBe(404);
    expect((await state(name)).mode).toBe("free");
    const badName = await post(path("a%20b", "read/acquire"), { ttlMs: 1000 });
    expect(badName.status).toBe(400);
    expect(badName.body.error).toBe("invalid_name");
    expect((await get(path("a%20b"))).body.error).toBe("invalid_name");
  });

  it("a missing or unknown key is 401 unauthorized and changes nothing", async () => {
    const name = uniqueName("rw-auth");
    for (const key of [null, "not-a-key"]) {
      const res = await post(path(name, "write/acquire"), { ttlMs: 1000 }, { key });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe("unauthorized");
    }
    expect((await state(name)).mode).toBe("free");
  });
}
