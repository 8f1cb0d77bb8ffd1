// What the cross-origin page does, called by test/http/access/browserTokens.test.ts through window.page:
// the SDK (served as sdk.js, bundled from src/client) with whatever key or token the test hands it.
import { HoldfastClient } from "./sdk.js";

const leases = new Map();

/** An error as plain data the test can compare: the SDK's class, code, status and the service's reason. */
const described = (err) => ({
  error: err.constructor.name,
  code: err.code,
  status: err.status,
  reason: err.body?.reason ?? null,
  // An unreachable service's message is what tells a refused origin from a dead network.
  ...(err.code === "unreachable" ? { message: err.message } : {}),
});

const client = (baseUrl, apiKey, waitChannel = "auto") => new HoldfastClient({ baseUrl, apiKey, waitChannel, timeoutMs: 3000 });

window.page = {
  /** Takes a mutex (waiting up to 15 s) and keeps its lease for release(). */
  async take(baseUrl, apiKey, name, waitChannel) {
    try {
      const lease = await client(baseUrl, apiKey, waitChannel).lock(name, { ttlMs: 15_000, waitMs: 15_000, holder: "browser-page" });
      leases.set(name, lease);
      return { channel: lease.channel, fence: lease.fence };
    } catch (err) {
      return described(err);
    }
  },

  async release(name) {
    const lease = leases.get(name);
    leases.delete(name);
    await lease.release();
    return lease.signal.aborted;
  },

  /** One call the token may or may not make: its answer, or the error it became. */
  async attempt(baseUrl, apiKey, what, name) {
    const c = client(baseUrl, apiKey, "http");
    try {
      if (what === "list") return await c.operator.list("mutex", { prefix: name });
      if (what === "audit") return await c.operator.audit();
      if (what === "inspect") return await c.inspect("mutex", name);
      if (what === "lock") {
        const lease = await c.lock(name, { ttlMs: 5000 });
        await lease.release();
        return { took: true };
      }
      throw new Error(`unknown attempt ${what}`);
    } catch (err) {
      return described(err);
    }
  },

  /** A plain fetch, as any script of the page could make: its status, or why the browser gave it none. */
  async rawFetch(url, apiKey) {
    try {
      return (await fetch(url, { headers: { authorization: `Bearer ${apiKey}` } })).status;
    } catch (err) {
      return `failed: ${err.name}`;
    }
  },

  /** A wait socket opened by hand with the key as a subprotocol: "open", or "refused" when it never opened. */
  rawSocket(url, apiKey) {
    const keyProtocol = `holdfast.key.${btoa(apiKey).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")}`;
    return new Promise((resolve) => {
      const ws = new WebSocket(url, ["holdfast.v1", keyProtocol]);
      ws.onopen = () => {
        ws.close();
        resolve("open");
      };
      ws.onclose = () => resolve("refused");
    });
  },
};
document.documentElement.dataset.ready = "1";
