import { expect, it } from "vitest";
import type { MutexAcquireInput } from "../../../src/kinds/mutex/types";
import { freshRef, type NewStore, requestId, SHORT_TTL_MS, tokenOf, untilStore } from "../../contract/support";

/**
 * An election at the store boundary (ElectionOps: the mutex's scripts on the
 * election's keys and lua/election/proclaim.lua, against durableElection.ts):
 * the value carried as the leader's label through a grant and a handoff,
 * proclaim's rule, and an election apart from a mutex of the same name.
 */
export function electionContract(newStore: NewStore): void {
  const campaign = (token: string, value: string, extra: Partial<MutexAcquireInput> = {}): MutexAcquireInput => ({
    token,
    mode: "new",
    ttlMs: 5000,
    requestId: requestId(),
    watch: false,
    holder: value,
    ...extra,
  });

  it("the leader proclaims: its value changes, its term and its lease's end do not", async () => {
    const store = newStore();
    const ref = freshRef("el-proclaim");
    const a = tokenOf("a");
    const granted = await store.election.acquire(ref, campaign(a, "first"));
    if (granted.status !== "granted") throw new Error("not granted");
    expect(await store.election.proclaim(ref, { token: a, value: "second" })).toEqual({
      status: "ok",
      fence: granted.grant.fence,
      expiresAt: granted.grant.expiresAt,
      // The grant was the history's first change, this value its second.
      position: 2,
    });
    expect(await store.election.inspect(ref)).toMatchObject({
      held: true,
      fence: granted.grant.fence,
      holder: "second",
      expiresAt: granted.grant.expiresAt,
    });
    // Safe to run twice: the same value again is no new change.
    expect(await store.election.proclaim(ref, { token: a, value: "second" })).toMatchObject({ status: "ok", position: 2 });
    expect((await store.election.observe(ref, { since: 0 })).changes.map((c) => c.value)).toEqual(["first", "second"]);
  });

  it("a proclaim by anyone but the live leader is lost and changes nothing", async () => {
    const store = newStore();
    const ref = freshRef("el-lost");
    const a = tokenOf("a");
    expect(await store.election.proclaim(ref, { token: a, value: "nobody leads" })).toEqual({ status: "lost" });
    await store.election.acquire(ref, campaign(a, "kept", { ttlMs: SHORT_TTL_MS }));
    expect(await store.election.proclaim(ref, { token: tokenOf("b"), value: "not mine" })).toEqual({ status: "lost" });
    expect((await store.election.inspect(ref)).holder).toBe("kept");
    // Once its lease lapsed, the leader's own proclaim is lost too.
    await untilStore(
      () => store.election.inspect(ref),
      (s) => !s.held,
    );
    expect(await store.election.proclaim(ref, { token: a, value: "too late" })).toEqual({ status: "lost" });
  });

  it("a resign hands the term to the registered next in line with its own value, at a higher fence", async () => {
    const store = newStore();
    const ref = freshRef("el-handoff");
    const a = tokenOf("a");
    const b = tokenOf("b");
    const first = await store.election.acquire(ref, campaign(a, "a's"));
    if (first.status !== "granted") throw new Error("not granted");
    // The lock object registers its head waiter (queue mode), as its line does.
    expect(await store.election.acquire(ref, campaign(b, "b's", { mode: "queue" }))).toMatchObject({ status: "busy" });
    const resigned = await store.election.release(ref, { token: a, requestId: requestId() });
    expect(resigned).toMatchObject({ status: "ok", released: true, handedTo: { token: b } });
    if (resigned.status !== "ok" || !resigned.handedTo) throw new Error("not handed over");
    expect(resigned.handedTo.fence).toBeGreaterThan(first.grant.fence);
    expect(await store.election.inspect(ref)).toMatchObject({ held: true, holder: "b's", fence: resigned.handedTo.fence });
  });

  it("a value of 4096 bytes is kept whole; an election and a mutex of one name are two locks", async () => {
    const store = newStore();
    const ref = freshRef("el-apart");
    const value = "é".repeat(2048);
    expect(await store.election.acquire(ref, campaign(tokenOf("a"), value))).toMatchObject({ status: "granted" });
    expect((await store.election.inspect(ref)).holder).toBe(value);
    expect(await store.mutex.acquire(ref, campaign(tokenOf("m"), "a mutex"))).toMatchObject({ status: "granted" });
    expect((await store.election.inspect(ref)).holder).toBe(value);
  });
}
