/**
 * The floor of the uncontended acquire + release through the Worker, for the
 * bench (bench/cycleFloor.ts). No holdfast code: the least a Worker can do
 * for a try-lock and its release on each store, spoken in the service's
 * request shape so the bench drives both with one client (bench/clients.ts
 * WorkerApi, at a base of <url>/do or <url>/redis):
 *
 *   POST /do/v1/locks/<name>/acquire  {"ttlMs"}   -> one RPC to the name's object, which reads the
 *                                                    holder and writes it (one storage write)
 *   POST /do/v1/locks/<name>/release  {"token"}   -> one RPC, one storage write (the delete)
 *   POST /redis/v1/locks/<name>/acquire            -> one EVALSHA through the gateway: SET NX PX
 *   POST /redis/v1/locks/<name>/release            -> one EVALSHA: GET, DEL when it is the token's
 *
 * The scripts carry the service's flag line (`allow-key-locking`) and as
 * many KEYS as its mutex scripts (4 to acquire, 6 to release), all of one
 * hash slot, so the gateway checks the same key rule on the same number of
 * keys. Left out: keys, validation, fences, request ids, metrics, rate
 * limits, waiting: everything the service adds to the store's round trip.
 */
import { DurableObject } from "cloudflare:workers";

interface Env {
  FLOOR: DurableObjectNamespace<FloorLock>;
  GATEWAY_URL: string;
  GATEWAY_TOKEN: string;
}

const ROUTE = /^\/(do|redis)\/v1\/locks\/([^/]+)\/(acquire|release)$/;

const ACQUIRE = "#!lua flags=allow-key-locking\nreturn redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') and 1 or 0";
const RELEASE = "#!lua flags=allow-key-locking\nif redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end\nreturn 0";

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const m = ROUTE.exec(new URL(request.url).pathname);
    if (!m || request.method !== "POST") return new Response("not found", { status: 404 });
    const [, store, name, op] = m;
    const body = (await request.json()) as { ttlMs?: number; token?: string };
    if (store === "do") {
      const lock = env.FLOOR.get(env.FLOOR.idFromName(name));
      if (op === "acquire") {
        const token = await lock.acquire(body.ttlMs ?? 10_000);
        return token ? Response.json({ token }) : Response.json({ error: "locked" }, { status: 409 });
      }
      return Response.json({ released: await lock.release(body.token ?? "") });
    }
    const keys = [`fl:{${name}}`, `fl:{${name}}:a`, `fl:{${name}}:b`, `fl:{${name}}:c`];
    if (op === "acquire") {
      const token = crypto.randomUUID();
      const ok = await script(env, ACQUIRE, keys, [token, String(body.ttlMs ?? 10_000)]);
      return ok === 1 ? Response.json({ token }) : Response.json({ error: "locked" }, { status: 409 });
    }
    const released = await script(env, RELEASE, [...keys, `fl:{${name}}:d`, `fl:{${name}}:e`], [body.token ?? ""]);
    return Response.json({ released: released === 1 });
  },
};

/** Each script's SHA-1, once per isolate. */
const shas = new Map<string, Promise<string>>();
function sha1(text: string): Promise<string> {
  let sha = shas.get(text);
  if (!sha) {
    sha = crypto.subtle
      .digest("SHA-1", new TextEncoder().encode(text))
      .then((d) => [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, "0")).join(""));
    shas.set(text, sha);
  }
  return sha;
}

/** EVALSHA over the Upstash REST API, EVAL when the script is not loaded yet. */
async function script(env: Env, text: string, keys: string[], args: string[]): Promise<unknown> {
  const call = async (command: string[]) => {
    const res = await fetch(env.GATEWAY_URL, {
      method: "POST",
      headers: { authorization: `Bearer ${env.GATEWAY_TOKEN}` },
      body: JSON.stringify(command),
    });
    return (await res.json()) as { result?: unknown; error?: string };
  };
  const first = await call(["EVALSHA", await sha1(text), String(keys.length), ...keys, ...args]);
  if (!first.error) return first.result;
  if (!first.error.includes("NOSCRIPT")) throw new Error(first.error);
  const second = await call(["EVAL", text, String(keys.length), ...keys, ...args]);
  if (second.error) throw new Error(second.error);
  return second.result;
}

/** One lock: who holds it and until when, in its storage. */
export class FloorLock extends DurableObject<Env> {
  acquire(ttlMs: number): string | undefined {
    const held = this.ctx.storage.kv.get<{ token: string; until: number }>("holder");
    if (held && held.until > Date.now()) return undefined;
    const token = crypto.randomUUID();
    this.ctx.storage.kv.put("holder", { token, until: Date.now() + ttlMs });
    return token;
  }

  release(token: string): boolean {
    const held = this.ctx.storage.kv.get<{ token: string; until: number }>("holder");
    if (held?.token !== token) return false;
    this.ctx.storage.kv.delete("holder");
    return true;
  }
}
