import { kindKey } from "../../store/kinds.js";
import type { FlowWait } from "./wait.js";
import type { AnsweredWrite, LockRef } from "../../store/types.js";
import type { Admitted, HolderBusy, HolderLeaseInput, HolderOps, HolderWriteNote as FlowWriteNote, QueuedHolder } from "../manyHolders/types.js";

/**
 * What both stores do for a flow limit (docs/API.md "Flow limit"): at most
 * `concurrency` slots held and at most `rate.count` grants in any window of
 * `rate.perMs`, each slot a lease. Its conformance cases hold both stores to
 * the same behaviour.
 */

/** The most slots a flow's concurrency and the most starts its rate may allow (as lua/flow/acquire.lua checks). */
export const FLOW_COUNT_MAX = 10_000;
/** A rate's window: from a second to a day, in whole milliseconds. */
export const FLOW_WINDOW_MIN_MS = 1000;
export const FLOW_WINDOW_MAX_MS = 86_400_000;

/** A flow's limit; at least one part is given. */
export interface FlowLimit {
  concurrency?: number;
  rate?: { count: number; perMs: number };
}

export interface FlowGrant {
  name: string;
  token: string;
  fence: number;
  ttlMs: number;
  expiresAt: number;
  /** When it was granted, on the store's clock: the start the rate counts. */
  startedAt: number;
  /** Slots held after this grant, its own counted. */
  held: number;
  /** Grants in the window ending at this one, its own counted (null without a rate). */
  starts: number | null;
}

export interface FlowAcquireInput extends FlowLimit, HolderLeaseInput {}

/** Why a try was turned away: every slot held, the window's starts used up, or others wait first. */
export type FlowBusyReason = "concurrency" | "rate" | "line";

export type FlowAcquireResult =
  | { status: "granted"; grant: FlowGrant }
  /** `current`: the first holder to end, when the slots are all held. */
  | (HolderBusy & { reason: FlowBusyReason })
  /** Holders or the window's starts are under another limit. */
  | { status: "limit_mismatch"; limit: FlowLimit };

export interface FlowQueuedHolder extends QueuedHolder, FlowLimit {}

export type FlowReleaseResult = { status: "ok"; held: number; watched: boolean; waiters: boolean } | { status: "lost" };

export interface FlowState {
  /** The limit in force (its holders', or its window's starts'); null when none is. */
  limit: FlowLimit | null;
  held: number;
  /** The labels of the first holders to end (at most 10; holders without one left out). */
  holderLabels: string[];
  /** When the first holder's lease ends (null when nobody holds). */
  expiresAt: number | null;
  /** Grants in the window ending now (null without a rate). */
  starts: number | null;
  /** When the window admits the next start (null when it does now). */
  nextStartAt: number | null;
}

/** Heartbeat, withdraw, watch, ungate and force release are the many-holder kinds' own (HolderOps). */
export interface FlowOps extends HolderOps {
  acquire(ref: LockRef, input: FlowAcquireInput): Promise<FlowAcquireResult>;
  admit(ref: LockRef, waiters: FlowQueuedHolder[], more: boolean): Promise<Admitted<FlowGrant> & { reason?: FlowBusyReason }>;
  release(ref: LockRef, input: { token: string } & AnsweredWrite): Promise<FlowReleaseResult>;
  inspect(ref: LockRef): Promise<FlowState>;
}

/** A limit as the stores keep it, to compare two: "concurrency/count/perMs", a part absent left empty. */
export const limitText = (l: FlowLimit) => `${l.concurrency ?? ""}/${l.rate?.count ?? ""}/${l.rate?.perMs ?? ""}`;

/** The limit a store's text stands for. */
export function limitOfText(text: string): FlowLimit {
  const [c, count, perMs] = text.split("/");
  return { ...(c ? { concurrency: Number(c) } : {}), ...(count ? { rate: { count: Number(count), perMs: Number(perMs) } } : {}) };
}

/** A limit in words, for a 409's message: "concurrency 4, 120 per 60000 ms". */
function limitInWords(l: FlowLimit): string {
  const parts = [l.concurrency === undefined ? "" : `concurrency ${l.concurrency}`, l.rate ? `${l.rate.count} per ${l.rate.perMs} ms` : ""];
  return parts.filter(Boolean).join(", ");
}

/** A waiter refused for another limit: the line's refusal (a 409 limit_mismatch naming the limit in force). */
export const mismatch = (inForce: FlowLimit) => ({ code: "limit_mismatch", message: limitMismatchMessage(inForce) });

export const limitMismatchMessage = (inForce: FlowLimit, asked?: FlowLimit) =>
  `the flow's limit in force is ${limitInWordsOrNone(inForce)}${asked ? `, this call asked ${limitInWordsOrNone(asked)}` : ""}; every acquire must ask for the same limit while anyone holds or a start is in its window`;

const limitInWordsOrNone = (l: FlowLimit) => limitInWords(l) || "none";

export type { FlowWriteNote };

/** The flow limit's name, carrying the types of its store operations, its wait request and its write notes. */
export const FLOW = kindKey<FlowOps, FlowWait, FlowWriteNote>()("flow");
