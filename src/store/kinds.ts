/**
 * The lock kinds as the core knows them: by name, and by the shapes each
 * brings. The core names no kind and imports none. Each kind adds itself to
 * these maps from its own folder, by TypeScript's declaration merging:
 *
 *   declare module "../../store/kinds.js" {
 *     interface KindOps { mutex: MutexOps }
 *   }
 *
 * so `store.mutex.acquire(...)` stays typed wherever the kind is part of the
 * program, and the runtime list of kinds is handed in by each entry point
 * (src/worker.ts, src/library/kinds.ts).
 */

/** Every kind's store operations, by the kind's name (also its lock objects' name prefix): src/kinds/<kind>/types.ts. */
// biome-ignore lint/suspicious/noEmptyInterface: each kind adds its member (declaration merging).
export interface KindOps {}

/** A kind's name. */
export type KindName = keyof KindOps & string;

/** Every kind's request to its lock object: a wait in its line, or one try with a watch (src/kinds/<kind>/wait.ts). */
// biome-ignore lint/suspicious/noEmptyInterface: each kind adds its member (declaration merging).
export interface KindWait {}

/** What the Worker tells a kind's lock object after a write in Redis (a release, a key given up). */
// biome-ignore lint/suspicious/noEmptyInterface: each kind adds its member (declaration merging).
export interface KindWriteNote {}

/**
 * The kinds whose clients wait in their lock object's line (one acquire flow: src/service/acquireFlow.ts).
 * @public (each waiting kind adds itself: declaration merging)
 */
// biome-ignore lint/suspicious/noEmptyInterface: each waiting kind adds itself (declaration merging).
export interface WaitingKinds {}

export type WaitingKindName = keyof WaitingKinds & KindName;
