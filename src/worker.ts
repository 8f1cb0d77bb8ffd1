import { app } from "./http/app";

/** The Worker: the Hono app plus the Durable Object classes wrangler binds. */
export { LockStateObject } from "./store/durable/LockStateObject";
export { LockRoom } from "./room/LockRoom";
export default app;
