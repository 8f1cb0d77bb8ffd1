import { createApp } from "./http/app.js";
import { openApiDocument } from "./http/openapi/openapi.generated.js";
import { LockObjectCore } from "./lockObject/LockObject.js";
import { kinds } from "./worker/kinds.js";
import { redisStoreOf, selectStore } from "./worker/stores.js";

/** The Worker: the Hono app plus the Durable Object classes wrangler binds. */
export { NamespaceObject } from "./namespaceObject/NamespaceObject.js";
/** The Hono app, handed the Worker's kinds (its core names none). */
export default createApp({ apis: kinds, selectStore, openApiDocument });

const objectKinds = { kinds, redisStoreOf };

/** One lock object per (kind, namespace, name), handed the Worker's kinds (its core names none). */
export class LockObject extends LockObjectCore {
  constructor(ctx: DurableObjectState, env: ConstructorParameters<typeof LockObjectCore>[1]) {
    super(ctx, env, objectKinds);
  }
}
