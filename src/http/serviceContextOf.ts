import type { Context } from "hono";
import { followUpsWith, type ServiceContext } from "../service/ServiceContext.js";
import { clientRequestIds, randomRequestIds } from "../service/requestIds.js";
import type { AppEnv } from "./appTypes.js";
import { noticingChanges } from "../service/changeNotes.js";
import { lockObjectClient } from "../lockObject/lockObjectClient.js";

/** The service layer's view of one request. */
export function serviceContext(c: Context<AppEnv>): ServiceContext {
  let waitUntil: (p: Promise<unknown>) => void;
  try {
    const ctx = c.executionCtx;
    waitUntil = (p) => ctx.waitUntil(p);
  } catch {
    waitUntil = (p) => void p; // no execution context: the follow-up still runs
  }
  // c.get, not c.var: Hono builds a new object of every variable on each read of c.var.
  const ns = c.get("ns");
  const clientId = c.get("requestId");
  const ids = clientId === undefined ? randomRequestIds : clientRequestIds(clientId, c.get("apiKey"), ns);
  const afterAnswer = followUpsWith(waitUntil);
  // On Redis the lock object hears of a write its kind notes, or that changed a lock it has watch sockets on (changeNotes.ts).
  const store = noticingChanges(c.get("store"), c.get("kinds"), (kind, ref, note) =>
    note === undefined
      ? afterAnswer("noteChange", () => lockObjectClient(c.env, kind, ref).noteChange())
      : afterAnswer("noteWrite", () => lockObjectClient(c.env, kind, ref).noteWrite(note)),
  );
  return { env: c.env, ns, store, ids, afterAnswer };
}
