import type { Hono } from "hono";

/**
 * The methods an app serves for a path, from its registered routes, so a
 * wrong method on a known route can be answered 405 with `Allow` rather
 * than 404. Route patterns (`/v1/locks/:name/acquire`,
 * `:mode{read|write}`) become regular expressions once.
 */
export function allowedMethodsOf(app: Hono<any>): (pathname: string) => string[] {
  let routes: Array<{ method: string; re: RegExp }> | undefined;
  return (pathname) => {
    routes ??= app.routes.filter(answersWrongMethod).map((r) => ({ method: r.method, re: patternOf(r.path) }));
    const methods = new Set(routes.filter((r) => r.re.test(pathname)).map((r) => r.method));
    if (methods.has("GET")) methods.add("HEAD"); // Hono answers HEAD for every GET route
    return [...methods].sort();
  };
}

/**
 * Routes whose path gets a 405 for another method: not middleware ("ALL",
 * "/v1/*"), and not the console's files below "/console/", which have
 * answered 404 to any other method since their route was "/console/:file{.*}"
 * (a "*" this filter left out); "/console" itself answers 405.
 */
function answersWrongMethod(r: { method: string; path: string }): boolean {
  return r.method !== "ALL" && !r.path.includes("*") && !r.path.startsWith("/console/");
}

function patternOf(path: string): RegExp {
  const source = path
    .split("/")
    .map((segment) => {
      const param = /^:\w+(?:\{(.+)\})?$/.exec(segment);
      if (!param) return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      return param[1] ? `(?:${param[1]})` : "[^/]+";
    })
    .join("/");
  return new RegExp(`^${source}$`);
}
