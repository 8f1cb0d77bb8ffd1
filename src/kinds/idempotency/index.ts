import type { IDEMPOTENCY } from "./types.js";
import { stateAsStored } from "../../lockObject/ObjectKinds.js";
import { defineKind } from "../kind.js";
import { durableIdempotency, nextIdempotencyDeadline } from "./durableIdempotency.js";
import { IdempotencyObjectPart } from "./objectPart.js";
import { idempotencyOperations } from "./operations.js";
import { idempotencyOnRedis } from "./redisIdempotency.js";
import { idempotencyNotes, inspectIdempotency } from "./service.js";
import { idempotencyWait } from "./wait.js";

/** Idempotency keys (docs/API.md "Idempotency keys"): one run per key, its result kept and replayed. */
export const idempotency = defineKind<typeof IDEMPOTENCY>({
  ...idempotencyOnRedis,
  nameInMessages: "idempotency keys",
  object: {
    part: (host) => new IdempotencyObjectPart(host),
    durable: durableIdempotency,
    nextDeadline: nextIdempotencyDeadline,
    wait: idempotencyWait,
    watchedState: stateAsStored("idempotency"),
  },
  service: {
    inspect: async (request, name) => ({ ...(await inspectIdempotency(request, name)) }),
    listed: (s) => s.state !== "absent",
    writeNotes: idempotencyNotes,
  },
  http: {
    path: "/v1/idempotency",
    operations: idempotencyOperations,
    offeredOnQuorum: false,
    nameParam: "key",
    oneInSummaries: "an idempotency key",
    listedInSummaries: "stored idempotency keys",
  },
});
