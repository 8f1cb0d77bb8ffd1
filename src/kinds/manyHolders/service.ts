import type { KindKey, KindName } from "../../store/kinds.js";
import type { HolderForceResult, HolderOps, HolderWriteNote } from "./types.js";
import { NotHeldError } from "../../errors.js";
import type { ServiceRequest } from "../../service/ServiceContext.js";
import { kindOps, type LockRef } from "../../store/types.js";
import { serviceContextOf } from "../../service/requestContext.js";

/** A force release its lock object must hear of (its line may move, watches end). */
export const forceReleaseNote = (r: HolderForceResult, ref: LockRef): HolderWriteNote | undefined =>
  r.status === "ok" && (r.waiters || r.endedTokens.length > 0) ? { ref, token: "", endedWatch: false, endedTokens: r.endedTokens } : undefined;

/**
 * An operator's force release of a many-holder lock (src/operator/forceRelease.ts checks the key and
 * writes the audit entry): every holder, or those with one label. The line moves on as after a release.
 */
export async function forceReleaseHolders(request: ServiceRequest, key: ForceReleasing, name: string, holder: string | undefined) {
  const ctx = serviceContextOf(request);
  const ref = { ns: ctx.ns, name };
  // Without a client id nothing retries it (the Worker never re-sends a store call), so nothing is kept for it either.
  const write = await ctx.ids.write(`${key.name}:${name}:force-release`);
  const r = await kindOps(ctx.store, key).forceRelease(ref, { ...write, ...(holder === undefined ? {} : { holder }) });
  if (r.status === "lost") throw new NotHeldError(holder === undefined ? `nobody holds ${name}` : `no holder of ${name} has that label`);
  return { released: r.released, fence: r.fence, holder: r.holder };
}

/** A many-holder kind's key: its force release is the holders' shared one, its write notes the holders'. */
type ForceReleasing = KindKey<KindName, Pick<HolderOps, "forceRelease">, unknown, HolderWriteNote>;
