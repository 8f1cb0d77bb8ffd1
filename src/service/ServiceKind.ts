import type { KindKey, NoteOf, OpsOf } from "../store/kinds.js";
import type { LockRef } from "../store/types.js";
import type { ServiceRequest } from "./ServiceContext.js";

/** What an operator's force release asks (src/operator/schemas.ts): a label picks holders of a many-holder lock, a fence the mutex's lease. */
export interface ForceReleaseAsk {
  holder?: string;
  fence?: number;
}

/**
 * The notes a kind's writes on Redis send its lock object (noteWrite, after the answer): by store
 * operation, the note its answer calls for, or undefined for none (its watchers are then pushed
 * the change if it has some: src/store/redis/changeNotes.ts).
 */
export type WriteNotes<K extends KindKey = KindKey> = {
  readonly [Op in keyof OpsOf<K>]?: OpsOf<K>[Op] extends (ref: LockRef, input: infer Input) => Promise<infer Result>
    ? (result: Result, ref: LockRef, input: Input) => NoteOf<K> | undefined
    : never;
};

/**
 * What a kind brings to the service layer (src/kinds/<kind>/index.ts, the
 * `service` of its descriptor): what listing, force release and the
 * Worker's notes of its writes need of it. The service layer
 * names no kind.
 */
export interface ServiceKind<K extends KindKey = KindKey> {
  readonly name: K["name"];
  /** How messages name the kind ("the mutex", "idempotency keys"). */
  readonly nameInMessages: string;
  readonly service: {
    /** Its GET body (without the name), which a listing's items are too. */
    inspect(request: ServiceRequest, name: string): Promise<Record<string, unknown>>;
    /** Whether a listing shows it: held, waited on, delayed or stored. */
    listed(state: Record<string, unknown>): boolean;
    /** An operator's force release (absent: the kind has none); what it freed. */
    forceRelease?(request: ServiceRequest, name: string, ask: ForceReleaseAsk): Promise<{ released: number; fence: number; holder: string | null }>;
    /** What its writes on Redis tell its lock object (its line may move, a watch ends): noteWrite's notes. */
    writeNotes?: WriteNotes<K>;
  };
}
