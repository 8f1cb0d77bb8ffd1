import { app } from "./http/app.js";

/** The Worker: the Hono app plus the Durable Object class wrangler binds. */
export { LockObject } from "./lockObject/LockObject.js";
export { NamespaceObject } from "./namespaceObject/NamespaceObject.js";
export default app;
