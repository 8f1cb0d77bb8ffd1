import { FLOW } from "./types.js";
import { holdersKind } from "../manyHolders/index.js";
import { waitedOn } from "../kind.js";
import { durableFlow, nextFlowDeadline } from "./durableFlow.js";
import { flowObjectPart } from "./objectPart.js";
import { flowOperations } from "./operations.js";
import { flowOnRedis } from "./redisFlow.js";
import { flowNotes } from "./service.js";
import { flowAcquireBody } from "./schemas.js";
import { flowWait } from "./wait.js";

/**
 * The flow limit (docs/API.md "Flow limit"): at most N slots held and R
 * starts in any window of P ms, per name, admitted in order. A kind of its
 * own, not a semaphore option: its store keeps the window's starts beside the
 * holders (so its object's cleanup is its own), its line is woken by the
 * window as well as by releases, and the semaphore's permits and limit stay
 * as they are; the holders' leases, heartbeat, withdraw, watch and force
 * release are src/kinds/manyHolders/'s.
 */
export const flow = holdersKind(FLOW, flowOnRedis, {
  nameInMessages: "the flow limit",
  object: { part: flowObjectPart, durable: durableFlow, nextDeadline: nextFlowDeadline, wait: flowWait, acquireBody: flowAcquireBody },
  service: { listed: (s) => Number(s.held) > 0 || waitedOn(s), writeNotes: flowNotes },
  http: { path: "/v1/flows", operations: flowOperations, oneInSummaries: "a flow limit", listedInSummaries: "held or waited-on flow limits" },
});
