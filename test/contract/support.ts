import { expect } from "vitest";
import type { LockRef } from "../../src/store/types";
import type { WorkerStore } from "../../src/worker/kinds";
import { pollUntil } from "../support/pollUntil";

/**
 * What the store-boundary contract cases share. A case calls one kind's store
 * operations directly (`store.mutex.acquire(...)`), below HTTP and the lock
 * object's line, and states the exact answer; the runner gives it the Redis
 * store (the Lua scripts) and the Durable store's rules on a lock object's
 * own storage, so a script and its Durable twin are held to one answer.
 */

/** A fresh store of one kind for a case; its `kind` names the store where the answers differ on purpose (documented in types.ts). */
export type NewStore = () => WorkerStore;

/** A lock no other case uses (every case shares one Redis). */
export function freshRef(label: string): LockRef {
  return { ns: "contract", name: `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}` };
}

/**
 * The store's clock and the test's may read a few ms apart (Redis's TIME
 * against the runtime's Date.now, which in workerd moves only at I/O).
 */
const CLOCK_SLACK_MS = 50;

/** Brackets a store call with the test's clock: times the store answers are checked against the bracket. */
export async function timed<T>(call: () => Promise<T>): Promise<{ value: T; t0: number; t1: number }> {
  const t0 = Date.now();
  const value = await call();
  return { value, t0, t1: Date.now() };
}

/** A time the store took between t0 and t1, plus `plus` (a lease end: now + ttl). */
export function timeBetween(t0: number, t1: number, plus = 0) {
  return expect.toSatisfy(
    (v: unknown) => typeof v === "number" && Number.isInteger(v) && v >= t0 + plus - CLOCK_SLACK_MS && v <= t1 + plus + CLOCK_SLACK_MS,
    `a time in [${t0 + plus}, ${t1 + plus}] give or take ${CLOCK_SLACK_MS} ms`,
  );
}

/**
 * A remaining time until `end` as the store saw it during a call made between
 * t0 and t1: end less the store's time then (at least 1 ms). Bracketed by the
 * call itself, so a slow machine cannot make it fail.
 */
export function remainingUntil(end: number, t0: number, t1: number) {
  const lo = Math.max(1, end - t1 - CLOCK_SLACK_MS);
  const hi = Math.max(1, end - t0 + CLOCK_SLACK_MS);
  return expect.toSatisfy((v: unknown) => typeof v === "number" && Number.isInteger(v) && v >= lo && v <= hi, `a remaining time in [${lo}, ${hi}]`);
}

/**
 * A fence the store issued during [t0, t1]: fences are max(last + 1, the
 * store's time in microseconds), so a new lock's first fence is its grant time.
 */
export function fenceIssuedBetween(t0: number, t1: number) {
  return expect.toSatisfy(
    (v: unknown) => typeof v === "number" && Number.isSafeInteger(v) && v >= (t0 - CLOCK_SLACK_MS) * 1000 && v <= (t1 + CLOCK_SLACK_MS) * 1000 + 1000,
    `a fence issued in [${t0}, ${t1}] (ms, as microseconds)`,
  );
}

/** Waits until a lease has lapsed as the store sees it (read through the store itself, no fixed sleep). */
export function untilStore<T>(read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 3000): Promise<T> {
  return pollUntil(read, ok, timeoutMs);
}

/** A request id no other call uses (a retry passes the same one on purpose). */
export const requestId = (label = "rq") => `${label}_${Math.random().toString(36).slice(2, 10)}`;

/** A lease short enough to lapse within a case. */
export const SHORT_TTL_MS = 150;

/** An owner token as the service makes them ("hf_": never parsed as a JSON number on the way back). */
export const tokenOf = (label: string) => `hf_${label}_${Math.random().toString(36).slice(2, 10)}`;
