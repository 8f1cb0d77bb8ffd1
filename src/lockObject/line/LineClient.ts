import type * as z from "zod/mini";
import type { WaitOutcome, WaitRequest } from "./waitProtocol.js";

/**
 * A lock's line of waiters, as the acquire flow (src/service/acquireFlow.ts)
 * waits in it: from the Worker, the lock object's client (lockObjectClient.ts,
 * over fetch and RPC); from inside the object, a wait socket's line
 * (socketLine.ts), which calls the kind's part directly. The flow is the same
 * either way: one pipeline for HTTP and socket waits.
 */
export interface LineClient {
  /** Wait in the line (or try once, with a watch); the signal withdraws the wait. */
  wait<Grant>(req: WaitRequest, grant: z.ZodMiniType<Grant>, signal?: AbortSignal): Promise<WaitOutcome<Grant>>;
  /** A grant from the line reached its client. */
  pickedUp(token: string): Promise<unknown>;
  /** A grant from the line whose client was gone: back to the line now. */
  takeBack(token: string): Promise<unknown>;
  /**
   * Present where the line is reached from outside the object (the Worker):
   * the wait's client hung up, so that waiter leaves the line, named by the
   * waiterId its request carried. A socket's line leaves by its signal.
   */
  withdraw?(waiterId: string): Promise<unknown>;
  /**
   * The wait is already inside the lock object, on a wait socket: every
   * grant there waits for the client's ack, the first try's too, so the flow
   * does not try the store first: the line's own first try does.
   */
  readonly inObject?: true;
}
