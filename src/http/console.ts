import { Hono } from "hono";
import type { AppEnv } from "./appTypes.js";
import { consoleAssets } from "./consoleAssets.generated.js";

/**
 * The operator console's static files (console/, embedded by
 * tools/gen-console-assets.mjs), mounted at /console. No key is needed to
 * fetch them: they hold no data, and the page asks for the key itself.
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
  // Revalidated on every load (cheap: the ETag), so a deploy's new console is picked up at once.
  "Cache-Control": "no-cache",
};

export const consoleRoutes = new Hono<AppEnv>();

// "/console" and "/console/" both open the page (the page's links are absolute, so either works). Hono's
// strict routing tells the two apart, and "/" mounted here matches only the first; ".*" matches the empty
// name after "/console/" too.
consoleRoutes.get("/", (c) => serve(c.req.header("if-none-match"), "index.html"));
consoleRoutes.get("/:file{.*}", (c) => serve(c.req.header("if-none-match"), c.req.param("file") || "index.html"));

function serve(ifNoneMatch: string | undefined, file: string): Response {
  // Own properties only: "constructor" or "__proto__" must not find the object's prototype.
  const asset = Object.hasOwn(consoleAssets, file) ? consoleAssets[file] : undefined;
  if (!asset) {
    return Response.json({ error: "not_found", message: `the console has no file ${file}` }, { status: 404, headers: SECURITY_HEADERS });
  }
  const headers = { ...SECURITY_HEADERS, "Content-Type": asset.type, ETag: asset.etag };
  if (ifNoneMatch?.split(",").some((tag) => tag.trim() === asset.etag)) return new Response(null, { status: 304, headers });
  return new Response(asset.body, { headers });
}
