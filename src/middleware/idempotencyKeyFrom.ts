import type { Context } from "hono";

/**
 * Key extractors for the idempotency middleware, for senders that name each
 * delivery: GitHub's `x-github-delivery` header, or the event id in the JSON
 * body of Stripe and most payment providers (the same event redelivered
 * keeps its id).
 */

/** The value of a request header, e.g. fromHeader("x-github-delivery"). */
export function fromHeader(name: string): (c: Context) => string | undefined {
  return (c) => c.req.header(name) || undefined;
}

/**
 * A string or number at a dotted path of the JSON body, e.g.
 * fromJsonBody("id") for Stripe events or fromJsonBody("data.id").
 * A body that is not JSON, or has nothing there, gives no key.
 */
export function fromJsonBody(path: string): (c: Context) => Promise<string | undefined> {
  const parts = path.split(".");
  return async (c) => {
    let value: unknown;
    try {
      // Hono caches the body, so the handler can still read it afterwards.
      value = JSON.parse(await c.req.text());
    } catch {
      return undefined;
    }
    for (const part of parts) {
      if (typeof value !== "object" || value === null) return undefined;
      value = (value as Record<string, unknown>)[part];
    }
    if (typeof value === "string" && value !== "") return value;
    if (typeof value === "number" && Number.isFinite(value)) return String(value);
    return undefined;
  };
}
