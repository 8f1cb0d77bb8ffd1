import type { Context, MiddlewareHandler, Next } from "hono";
import { ForbiddenError } from "../../errors.js";
import { namespaceEntries } from "../operator/namespaceEntries.js";
import type { AppEnv } from "../appTypes.js";
import { REQUEST_ID_HEADER } from "../requestId.js";

/**
 * Browsers on other origins (docs/API.md, "Browsers"): CORS_ORIGINS lists,
 * per namespace, the origins whose pages may call the service,
 * "shop=https://app.shop.example,shop=http://localhost:5173". A request
 * without an Origin (a server's) pays one header read here.
 */

/** What the SDK sends (src/client/transport.ts): its key, its JSON body, its retries' request id. */
const ALLOW_HEADERS = `Authorization, Content-Type, ${REQUEST_ID_HEADER}`;
/** What the SDK reads of an answer beyond the body (a 429's or 409's wait). */
const EXPOSE_HEADERS = "Retry-After";
/** Chromium's cap: a page asks again at most every 2 hours. */
const MAX_AGE_S = "7200";

const parsed = new Map<string, Map<string, Set<string>>>();

/**
 * CORS_ORIGINS as origin -> the namespaces that list it. An entry that is
 * not namespace=origin (scheme://host[:port], nothing after) makes the whole
 * setting ignored: browsers are then refused, as without it, rather than let
 * in by a guess. The Worker's settings line says which entry and why
 * (corsOriginsProblem, src/http/settings/).
 */
function originsOf(corsOrigins: string | undefined): Map<string, Set<string>> {
  const text = corsOrigins ?? "";
  let origins = parsed.get(text);
  if (origins) return origins;
  origins = new Map();
  if (corsOriginsProblem(text) === undefined) {
    for (const entry of namespaceEntries(text)) {
      if ("bad" in entry) continue; // none: checked above
      origins.set(entry.value, (origins.get(entry.value) ?? new Set()).add(entry.ns));
    }
  }
  parsed.set(text, origins);
  return origins;
}

/** Why CORS_ORIGINS is ignored (its first bad entry, by position, and what is wrong with it), or undefined when it is not. */
export function corsOriginsProblem(corsOrigins: string | undefined): string | undefined {
  const entries = namespaceEntries(corsOrigins ?? "");
  for (const [i, entry] of entries.entries()) {
    const wrong = "bad" in entry ? "has no namespace of 1-64 A-Z a-z 0-9 _ - before its =" : originProblem(entry.value);
    if (wrong) return `CORS_ORIGINS entry ${i + 1} of ${entries.length} is not namespace=scheme://host[:port]: it ${wrong}`;
  }
  return undefined;
}

/** What keeps `text` from being an origin as a browser sends it, or undefined. */
function originProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "is not a URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "is not http or https";
  if (url.origin === text) return undefined;
  if (`${url.origin}/` === text) return "ends with a slash, which no browser sends: drop it";
  return "has more than scheme://host[:port] (a path, a query, a default port or upper case), which no browser sends";
}

/**
 * First on /v1/*: answers a preflight from a listed origin (listed under any
 * namespace: a preflight carries no key) before the key is asked for, and
 * lets a listed origin's page read the answer, once the key is known only if
 * its namespace lists that origin. Everything else passes as if this were
 * not here (an unlisted origin's preflight is refused 401 as before).
 */
export const cors: MiddlewareHandler<AppEnv> = (c, next) => {
  // Not async: a server's request (no Origin) passes on without a promise of this layer's own.
  const origin = c.req.header("origin");
  const listedBy = origin === undefined ? undefined : originsOf(c.env.CORS_ORIGINS).get(origin);
  if (!origin || !listedBy) return next();
  return corsFor(c, next, origin, listedBy);
};

async function corsFor(c: Context<AppEnv>, next: Next, origin: string, listedBy: Set<string>): Promise<Response | undefined> {
  if (c.req.method === "OPTIONS" && c.req.header("access-control-request-method")) {
    return c.body(null, 204, {
      "Access-Control-Allow-Origin": origin,
      "Access-Control-Allow-Methods": "GET, POST",
      "Access-Control-Allow-Headers": ALLOW_HEADERS,
      "Access-Control-Max-Age": MAX_AGE_S,
      Vary: "Origin",
    });
  }
  await next();
  // No key known (refused before one was): as for the preflight, so the page can read why it was refused.
  const ns = c.get("caller")?.namespace;
  if ((ns !== undefined && !listedBy.has(ns)) || c.res.status === 101) return;
  let headers = c.res.headers;
  try {
    headers.set("Access-Control-Allow-Origin", origin);
  } catch {
    // An answer passed through from elsewhere has immutable headers: copy it to set them.
    c.res = new Response(c.res.body, c.res);
    headers = c.res.headers;
    headers.set("Access-Control-Allow-Origin", origin);
  }
  headers.set("Access-Control-Expose-Headers", EXPOSE_HEADERS);
  headers.append("Vary", "Origin");
  return undefined;
}

/**
 * A wait socket from a browser (it sends Origin; a server's socket does not)
 * opens only from this service's own origin or one its key's namespace lists:
 * WebSockets are not subject to CORS, so the service checks for the browser.
 */
export function checkSocketOrigin(request: Request, corsOrigins: string | undefined, namespace: string): void {
  const origin = request.headers.get("origin");
  if (origin === null || origin === new URL(request.url).origin || originsOf(corsOrigins).get(origin)?.has(namespace)) return;
  throw new ForbiddenError(`a wait socket from ${origin} is refused: CORS_ORIGINS does not list that origin for this key's namespace`, "origin");
}
