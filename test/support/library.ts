import { Redis } from "@upstash/redis";
import { inject } from "vitest";
import { type LockStore, RedisStore } from "holdfast";

/**
 * What the library tests share: a real @upstash/redis client on the test
 * stack's gateway, names no other test uses, and a real RedisStore that
 * records every call made to it (to show bad input never reaches the store).
 */
export const sharedRedis = () => new Redis({ url: inject("upstashUrl"), token: inject("upstashToken") });
export const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function spyStore(redis: Redis) {
  const inner = new RedisStore(redis);
  const calls: Array<{ method: string; args: unknown[] }> = [];
  // Records every operation as "<kind>.<op>" (a kind's operations are an object of the store).
  const spy = <T extends object>(target: T, prefix: string): T =>
    new Proxy(target, {
      get(t, prop) {
        const value = Reflect.get(t, prop, t);
        if (value && typeof value === "object") return spy(value, `${prefix}${String(prop)}.`);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          calls.push({ method: `${prefix}${String(prop)}`, args });
          return value.apply(t, args);
        };
      },
    });
  const store = spy(inner, "") as unknown as LockStore;
  return { store, calls };
}
