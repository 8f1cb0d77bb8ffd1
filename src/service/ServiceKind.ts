import type { KindKey } from "../store/kinds.js";
import type { ServiceContext } from "./ServiceContext.js";

/** What an operator's force release asks (src/operator/schemas.ts): a label picks holders of a many-holder lock, a fence the mutex's lease. */
export interface ForceReleaseAsk {
  holder?: string;
  fence?: number;
}

/** What a store write answered, as the rules below read it. */
export type WriteResult = Record<string, unknown>;

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
    inspect(ctx: ServiceContext, name: string): Promise<Record<string, unknown>>;
    /** Whether a listing shows it: held, waited on, delayed or stored. */
    listed(state: Record<string, unknown>): boolean;
    /** An operator's force release (absent: the kind has none); what it freed. */
    forceRelease?(ctx: ServiceContext, name: string, ask: ForceReleaseAsk): Promise<{ released: number; fence: number; holder: string | null }>;
    /**
     * The writes whose service tells the lock object itself, by noteWrite (which pushes its watchers too):
     * by operation, the service's own condition on the store's answer. src/service/changeNotes.ts then
     * does not tell it a second time.
     */
    writesThatTellTheLockObject?: Readonly<Record<string, (result: WriteResult) => boolean>>;
  };
}
