import { createApp } from "./http/app.js";
import { objectKinds } from "./kinds/registry/object.js";
import { kindApis } from "./kinds/registry/routes.js";
import { socketAcquire } from "./kinds/registry/service.js";
import { selectStore } from "./kinds/registry/stores.js";
import { LockObjectCore } from "./lockObject/LockObject.js";
import { openApiDocument } from "./http/openapi/openapi.generated.js";

/** The Worker: the Hono app plus the Durable Object classes wrangler binds. */
export { NamespaceObject } from "./namespaceObject/NamespaceObject.js";
/** The Hono app, handed the kinds from the registry (its core names none). */
export default createApp({ apis: kindApis, selectStore, openApiDocument });

/** One lock object per (kind, namespace, name), handed the kinds from the registry (its core names none). */
export class LockObject extends LockObjectCore {
  constructor(ctx: DurableObjectState, env: ConstructorParameters<typeof LockObjectCore>[1]) {
    super(ctx, env, { ...objectKinds, socketAcquire });
  }
}
