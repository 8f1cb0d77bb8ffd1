// What `npm start` (tools/dev/start.mjs) settles before it serves: the local
// key and namespace, whether its port is free, and when `wrangler dev` answers.
import net from "node:net";

/** The documented local-only admin key used when API_KEYS is not set. */
export const LOCAL_API_KEY = "holdfast-local-dev-key";
/**
 * The local key's namespace: the library's default (`namespace` unset in
 * Mutex, RwLock, Semaphore, Idempotency), so the library and the local Worker
 * name the same keys on one Redis.
 */
export const LOCAL_NAMESPACE = "default";

/** Listens on 127.0.0.1:port (0: any free port), answers the port, or the listen error's code. */
function tryListen(port) {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", (err) => resolve({ error: err.code ?? String(err) }));
    server.listen(port, "127.0.0.1", () => {
      const got = /** @type {net.AddressInfo} */ (server.address()).port;
      server.close(() => resolve({ port: got }));
    });
  });
}

/**
 * Null when `port` is free on 127.0.0.1; else what to do about it, naming a port that is free now and
 * the command that was run (`npm start`, `npm run start:redis`, ...), so the line can be run as it is.
 * @param {number} port @param {string} command @returns {Promise<string | null>}
 */
export async function busyPortHint(port, command) {
  const probe = await tryListen(port);
  if (!probe.error) return null;
  const free = await tryListen(0);
  const example = free.port ? `, e.g. PORT=${free.port} ${command}` : "";
  if (probe.error === "EADDRINUSE") return `port ${port} is busy; set PORT to a free one${example}`;
  return `cannot listen on 127.0.0.1:${port} (${probe.error}); set PORT to another port${example}`;
}

/**
 * Resolves once `url` gives any HTTP answer; checks again every 100 ms, until `gaveUp()` says to stop.
 * @param {string} url @param {() => boolean} gaveUp
 */
export async function untilAnswers(url, gaveUp) {
  while (!gaveUp()) {
    try {
      await fetch(url, { signal: AbortSignal.timeout(2_000) });
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
