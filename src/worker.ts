import { app } from "./http/app.js";
import { objectKinds } from "./kinds/registry/object.js";
import { LockObjectCore } from "./lockObject/LockObject.js";

/** The Worker: the Hono app plus the Durable Object classes wrangler binds. */
export { NamespaceObject } from "./namespaceObject/NamespaceObject.js";
export default app;

/** One lock object per (kind, namespace, name), handed the kinds from the registry (its core names none). */
export class LockObject extends LockObjectCore {
  constructor(ctx: DurableObjectState, env: ConstructorParameters<typeof LockObjectCore>[1]) {
    super(ctx, env, objectKinds);
  }
}
