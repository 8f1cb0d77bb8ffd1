import type { WatchState } from "../types.js";
import { numberField, type ScriptReply, unexpectedReply } from "./ScriptRunner.js";

/** A kind's watch script reply (lua/<kind>/watch.lua), decoded by name. */
export function watchStateOf(name: string, r: ScriptReply): WatchState {
  if (r.state === "held") return { state: "held", remainingMs: numberField(r, "remainingMs"), expiresAt: numberField(r, "expiresAt") };
  if (r.state === "ended" || r.state === "lapsed") return { state: r.state };
  throw unexpectedReply(name, r);
}
