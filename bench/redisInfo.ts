/**
 * Server-side counts from the bench's redis-server, read through the gateway
 * with an uncounted fetch. The Worker's requests to Upstash happen inside
 * workerd where we cannot wrap fetch, so for Worker rows the store traffic is
 * measured as Lua script calls: cmdstat_evalsha + cmdstat_eval (+ _ro).
 * Commands that scripts run themselves (GET, HSET...) are counted by Redis
 * too, which is why only the script commands are summed.
 */
import type { Gateway } from "./stack";
import { rawFetch } from "./roundTrips";

export async function gatewayCommand(gw: Gateway, command: Array<string | number>): Promise<unknown> {
  const res = await rawFetch(gw.url, {
    method: "POST",
    headers: { authorization: `Bearer ${gw.token}`, "content-type": "application/json" },
    body: JSON.stringify(command.map(String)),
    signal: AbortSignal.timeout(5000),
  });
  const body = (await res.json()) as { result?: unknown; error?: string };
  if (!res.ok || body.error) throw new Error(`gateway ${command[0]}: ${res.status} ${body.error ?? ""}`);
  return body.result;
}

/** Total Lua script invocations (EVAL, EVALSHA and their _RO forms) so far. */
export async function scriptCalls(gw: Gateway): Promise<number> {
  const text = String(await gatewayCommand(gw, ["INFO", "commandstats"]));
  let total = 0;
  for (const m of text.matchAll(/^cmdstat_(eval|evalsha|eval_ro|evalsha_ro):calls=(\d+)/gm)) total += Number(m[2]);
  return total;
}

export async function redisVersion(gw: Gateway): Promise<string> {
  const text = String(await gatewayCommand(gw, ["INFO", "server"]));
  return /^redis_version:(.+)$/m.exec(text)?.[1]?.trim() ?? "?";
}
