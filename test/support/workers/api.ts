import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import worker from "../../../src/worker";
import type { Env } from "../../../src/env";

export type StoreKind = "redis" | "durable";
export const KEY_A = "key-aaaaaaaa";
export const KEY_B = "key-bbbbbbbb";
/** tenant-a's admin key, named ops-admin (vitest.config.ts): it may force-release. */
export const KEY_ADMIN = "key-admin-aaaa";
/** tenant-audit's admin key (vitest.config.ts): a namespace only the audit paging case writes to. */
export const KEY_AUDIT_ADMIN = "key-audit-admin";

/** The Worker's env for one store: Upstash variables set for redis, unset for durable. */
export function envFor(kind: StoreKind, overrides: Partial<Env> = {}): Env {
  const base: Env = { ...env, UPSTASH_REDIS_REST_URL: undefined, UPSTASH_REDIS_REST_TOKEN: undefined };
  if (kind === "redis") {
    base.UPSTASH_REDIS_REST_URL = env.TEST_UPSTASH_URL;
    base.UPSTASH_REDIS_REST_TOKEN = env.TEST_UPSTASH_TOKEN;
  }
  return { ...base, ...overrides };
}

export interface ApiResponse {
  status: number;
  body: any;
  headers: Headers;
}

/** Calls the real Worker (Hono app + bindings) inside workerd. */
export function api(kind: StoreKind, overrides: Partial<Env> = {}) {
  const e = envFor(kind, overrides);
  async function call(
    method: string,
    path: string,
    body?: unknown,
    opts: { key?: string | null; raw?: string; headers?: Record<string, string>; signal?: AbortSignal } = {},
  ): Promise<ApiResponse> {
    const headers: Record<string, string> = { "content-type": "application/json", ...opts.headers };
    const key = opts.key === undefined ? KEY_A : opts.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    const init: RequestInit = { method, headers, signal: opts.signal };
    if (opts.raw !== undefined) init.body = opts.raw;
    else if (body !== undefined) init.body = JSON.stringify(body);
    const ctx = createExecutionContext();
    const res = await worker.fetch(new Request(`http://holdfast.test${path}`, init), e, ctx);
    // Read the answer first, as a client does: some answers confirm their delivery once read.
    const text = await res.text();
    await waitOnExecutionContext(ctx);
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: res.status, body: parsed, headers: res.headers };
  }
  /** Sends a request and never reads its answer, like a client that went away. */
  async function raw(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
    const ctx = createExecutionContext();
    return await worker.fetch(
      new Request(`http://holdfast.test${path}`, {
        method,
        headers: { "content-type": "application/json", authorization: `Bearer ${KEY_A}`, ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
      e,
      ctx,
    );
  }
  return {
    env: e,
    call,
    raw,
    post: (path: string, body?: unknown, opts?: Parameters<typeof call>[3]) => call("POST", path, body, opts),
    get: (path: string, opts?: Parameters<typeof call>[3]) => call("GET", path, undefined, opts),
  };
}

let counter = 0;
/** A lock name no other test uses (tests share one Redis). */
export function uniqueName(label: string): string {
  counter += 1;
  return `${label}-${Date.now().toString(36)}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
