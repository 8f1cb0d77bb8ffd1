import { honoApp } from "../honoApp.js";
import { NotConfiguredError } from "../../errors.js";

/**
 * The operator console's static files (console/), mounted at /console. They
 * are Workers static assets (wrangler.toml [assets], binding ASSETS, the
 * Worker first for every request), so they add nothing to the Worker's bundle
 * and every answer passes through here for the headers below. No key is
 * needed to fetch them: they hold no data, and the page asks for the key
 * itself.
 *
 * The headers are the console's defence against script injection: the page
 * shows lock names, holder labels and reasons that any key holder of the
 * namespace wrote, so nothing but the console's own files may run or style
 * it (no inline script or style, no other origin), it may talk only to this
 * origin, and no other site may frame it. The key lives in sessionStorage,
 * which a script could read; the CSP is what keeps a script from getting in.
 */
const SECURITY_HEADERS: Record<string, string> = {
  "Content-Security-Policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  // Revalidated on every load (the assets' ETag), so a deploy's new console is picked up at once.
  "Cache-Control": "no-cache",
};

/** The types the console is made of: a file of any other type is not served (nothing to guess a type for). */
const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml; charset=utf-8",
};

/** A console file's name: one segment, lower-case words, a known extension. */
const FILE = /^[a-z][a-z0-9-]*\.([a-z]+)$/;

/** Mounted at "/": its paths are whole, as "/console/" cannot be written relative to a mount at "/console". */
export const consoleRoutes = honoApp();

// "/console" and "/console/" both open the page (its links are absolute); Hono's strict routing tells the two
// apart. The file is ".+", not ".*" with the empty name: Hono's RegExpRouter refuses a pattern that matches
// nothing, and the app would fall back to its slower TrieRouter (test/http/router.test.ts).
consoleRoutes.get("/console", (c) => serve(c.env.ASSETS, c.req.raw, "index.html"));
consoleRoutes.get("/console/", (c) => serve(c.env.ASSETS, c.req.raw, "index.html"));
consoleRoutes.get("/console/:file{.+}", (c) => serve(c.env.ASSETS, c.req.raw, c.req.param("file")));

async function serve(assets: Fetcher | undefined, request: Request, file: string): Promise<Response> {
  const type = TYPES[FILE.exec(file)?.[1] ?? ""];
  const notFound = () =>
    Response.json({ error: "not_found", message: `the console has no file ${file}` }, { status: 404, headers: SECURITY_HEADERS });
  if (!type) return notFound();
  if (!assets) throw new NotConfiguredError("the console's files are not bound (wrangler.toml [assets], binding ASSETS)");
  const headers = new Headers();
  const ifNoneMatch = request.headers.get("if-none-match");
  if (ifNoneMatch) headers.set("if-none-match", ifNoneMatch);
  const found = await assets.fetch(new Request(new URL(`/${file}`, request.url), { headers }));
  if (found.status !== 200 && found.status !== 304) return notFound();
  const etag = found.headers.get("etag");
  return new Response(found.status === 304 ? null : found.body, {
    status: found.status,
    headers: { ...SECURITY_HEADERS, "Content-Type": type, ...(etag ? { ETag: etag } : {}) },
  });
}
