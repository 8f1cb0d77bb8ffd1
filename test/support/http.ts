/** The Worker's HTTP API as a test's client sees it: status and parsed body, with one API key. */
export function httpClient(base: string, key: string) {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  return { post: (path: string, body: unknown) => call("POST", path, body), get: (path: string) => call("GET", path) };
}
