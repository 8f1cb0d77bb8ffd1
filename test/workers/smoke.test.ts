import { SELF, env, runInDurableObject } from "cloudflare:test";
import { expect, it, inject } from "vitest";
it("runs in workerd", async () => {
  const r = await SELF.fetch("http://x/");
  expect(await r.json()).toEqual({ ok: true, url: "http://127.0.0.1:1234" });
  const stub = env.LOCK_STATE.get(env.LOCK_STATE.idFromName("a"));
  expect(await stub.ping()).toBe("pong");
  expect(inject("upstashUrl")).toBe("http://127.0.0.1:1234");
});
