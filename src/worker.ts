import { app } from "./http/app";

/** The Worker: the Hono app plus the Durable Object class wrangler binds. */
export { LockObject } from "./lockObject/LockObject";
export default app;
