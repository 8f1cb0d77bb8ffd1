import { DurableObject } from "cloudflare:workers";
export class LockStateObject extends DurableObject { async ping() { return "pong"; } }
export class LockRoom extends DurableObject {}
export default { async fetch(req: Request, env: any) { return new Response(JSON.stringify({ ok: true, url: env.UPSTASH_REDIS_REST_URL ?? null })); } };
