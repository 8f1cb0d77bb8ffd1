import type { AnsweredWrite } from "../types.js";

/**
 * The Durable store's answer memory: a write's result kept under its request
 * id, so a retried request gets the first answer (as the Redis scripts do
 * with their request keys). A write whose id no retry can carry
 * (idUnrepeated) keeps nothing and finds nothing.
 */
const PREFIX = "rq:";

interface Remembered<T> {
  result: T;
  until: number;
}

export function recall<T>(kv: SyncKvStorage, write: AnsweredWrite, now: number): T | undefined {
  if (write.idUnrepeated) return undefined;
  const r = kv.get<Remembered<T>>(PREFIX + write.requestId);
  return r && r.until > now ? r.result : undefined;
}

export function remember<T>(kv: SyncKvStorage, write: AnsweredWrite, result: T, until: number): T {
  if (!write.idUnrepeated) kv.put<Remembered<T>>(PREFIX + write.requestId, { result, until });
  return result;
}

/** Drops expired answers; returns the earliest `until` still kept, if any. */
export function forgetExpired(kv: SyncKvStorage, now: number): number | undefined {
  let next: number | undefined;
  for (const [key, r] of kv.list<Remembered<unknown>>({ prefix: PREFIX })) {
    if (r.until <= now) kv.delete(key);
    else next = next === undefined ? r.until : Math.min(next, r.until);
  }
  return next;
}
