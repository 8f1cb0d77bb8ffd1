import type { KindKey, KindName } from "../../store/kinds.js";
import type { HolderOps } from "./types.js";
import { NotHeldError } from "../../errors.js";
import { lockObjectClient } from "../../lockObject/lockObjectClient.js";
import type { ServiceContext } from "../../service/ServiceContext.js";
import { kindOps } from "../../store/types.js";

/**
 * An operator's force release of a read-write lock or semaphore
 * (src/operator/forceRelease.ts checks the key and writes the audit entry):
 * every holder, or those with one label. The line moves on as after a
 * release; on Redis the lock object hears of it after the answer.
 */
/** A force release the lock object must hear of (its line may move, watches end): told by noteWrite, after the answer. */
export const forceReleaseTellsObject = (r: { waiters?: unknown; endedTokens?: unknown }) =>
  r.waiters === true || (Array.isArray(r.endedTokens) && r.endedTokens.length > 0);

/** A many-holder kind's key: its force release is the holders' shared one. */
type ForceReleasing = KindKey<KindName, Pick<HolderOps, "forceRelease">>;

export async function forceReleaseHolders(ctx: ServiceContext, key: ForceReleasing, name: string, holder: string | undefined) {
  const kind = key.name;
  const ref = { ns: ctx.ns, name };
  // Without a client id nothing retries it (the Worker never re-sends a store call), so nothing is kept for it either.
  const write = await ctx.ids.write(`${kind}:${name}:force-release`);
  const r = await kindOps(ctx.store, key).forceRelease(ref, { ...write, ...(holder === undefined ? {} : { holder }) });
  if (r.status === "lost") throw new NotHeldError(holder === undefined ? `nobody holds ${name}` : `no holder of ${name} has that label`);
  if (ctx.store.kind === "redis" && forceReleaseTellsObject(r)) {
    const endedTokens = r.endedTokens;
    ctx.afterAnswer("force-released", () => lockObjectClient(ctx.env, kind, ref).noteWrite({ ref, token: "", endedWatch: false, endedTokens }));
  }
  return { released: r.released, fence: r.fence, holder: r.holder };
}
