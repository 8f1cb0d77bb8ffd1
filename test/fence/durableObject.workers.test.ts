import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DurableObjectFence, FenceInputError, StaleFenceError } from "../../src/fence/index.js";
import { uniqueName } from "../support/workers/api";

/**
 * holdfast/fence's Durable Object helper on a real object's storage in
 * workerd. The object is a NamespaceObject of a name no test uses as a
 * namespace: its storage is a real SQLite-backed object's, and the helper's
 * keys ("holdfast:fence:*" and the resources') are not any the object reads.
 */
const inObject = <T>(name: string, fn: (fence: DurableObjectFence, storage: DurableObjectStorage) => Promise<T>) => {
  const stub = env.NAMESPACE_OBJECT.get(env.NAMESPACE_OBJECT.idFromName(name));
  return runInDurableObject(stub, (_o, state) => fn(new DurableObjectFence(state.storage), state.storage));
};

describe("DurableObjectFence", () => {
  it("refuses an older fence after a claim, naming both, and writes nothing", async () => {
    const name = uniqueName("fence-do");
    const seen = await inObject(name, async (fence, storage) => {
      await fence.put("orders:42", 5, { total: 5 });
      const claimed = await fence.claim("orders:42", 7);
      const err = await fence.put("orders:42", 6, { total: 6 }).catch((e: unknown) => e);
      const afterDelete = await fence.delete("orders:42", 6).catch((e: unknown) => e);
      return { claimed, err, afterDelete, value: await storage.get("orders:42"), stored: await storage.get("holdfast:fence:orders:42") };
    });
    expect(seen.claimed).toEqual({ previous: 5 });
    expect(seen.err).toBeInstanceOf(StaleFenceError);
    expect(seen.err).toMatchObject({ code: "stale_fence", resource: "orders:42", fence: 6, current: 7 });
    expect(seen.afterDelete).toBeInstanceOf(StaleFenceError);
    expect(seen.value).toEqual({ total: 5 });
    expect(seen.stored).toBe(7);
  });

  it("lets equal and newer fences write, and keeps the fence after a delete", async () => {
    const seen = await inObject(uniqueName("fence-do"), async (fence, storage) => {
      await fence.put("r", 3, "a");
      await fence.put("r", 3, "b");
      const added = await fence.write("r", 4, async (txn, previous) => {
        const count = ((await txn.get<number>("r:count")) ?? 0) + 1;
        await txn.put("r:count", count);
        return { previous, count };
      });
      const deleted = await fence.delete("r", 4);
      const late = await fence.put("r", 3, "late").catch((e: unknown) => e);
      return { added, deleted, late, value: await storage.get("r"), count: await storage.get("r:count") };
    });
    expect(seen.added).toEqual({ previous: 3, count: 1 });
    expect(seen.deleted).toBe(true);
    expect(seen.late).toMatchObject({ fence: 3, current: 4 });
    expect(seen.value).toBeUndefined();
    expect(seen.count).toBe(1);
  });

  it("rolls back the write and the fence when the write throws", async () => {
    const seen = await inObject(uniqueName("fence-do"), async (fence, storage) => {
      const err = await fence
        .write("r", 9, async (txn) => {
          await txn.put("r", "half done");
          throw new Error("the write failed");
        })
        .catch((e: unknown) => e);
      return { err, value: await storage.get("r"), stored: await storage.get("holdfast:fence:r") };
    });
    expect(seen.err).toMatchObject({ message: "the write failed" });
    expect(seen.value).toBeUndefined();
    expect(seen.stored).toBeUndefined();
  });

  it("refuses bad input and a corrupt stored fence, writing nothing", async () => {
    const seen = await inObject(uniqueName("fence-do"), async (fence, storage) => {
      const codes: unknown[] = [];
      for (const write of [
        () => fence.put("r", 2 ** 53, "v"),
        () => fence.put("r", -1, "v"),
        () => fence.put("", 1, "v"),
        () => fence.put("x".repeat(201), 1, "v"),
        () => fence.put("holdfast:fence:r", 1, 5),
        () => fence.put("r", 1, undefined),
      ]) {
        const err = await write().catch((e: unknown) => e);
        codes.push(err instanceof FenceInputError ? err.code : err);
      }
      const untouched = (await storage.list()).size;
      await storage.put("holdfast:fence:c", "12abc");
      const corrupt = await fence.put("c", 99, "v").catch((e: unknown) => e);
      return { codes, untouched, corrupt, value: await storage.get("c"), stored: await storage.get("holdfast:fence:c") };
    });
    expect(seen.codes).toEqual(["invalid_fence", "invalid_fence", "invalid_resource", "invalid_resource", "invalid_resource", "invalid_value"]);
    expect(seen.untouched).toBe(0);
    expect(seen.corrupt).toMatchObject({ code: "corrupt_fence", field: "resource" });
    expect(seen.value).toBeUndefined();
    expect(seen.stored).toBe("12abc");
  });
});
