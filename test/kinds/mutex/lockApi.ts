import { api, type StoreKind } from "../../support/workers/api.js";
import { eventually } from "../../support/workers/lockObjectHelpers.js";

/** The mutex API as the mutex's conformance cases call it: requests, a lock's paths, and its line's length. */
export function lockApi(kind: StoreKind) {
  const { post, get } = api(kind);
  const path = (name: string, op = "") => `/v1/locks/${name}${op ? `/${op}` : ""}`;
  const waiters = async (name: string) => (await get(path(name))).body.waiters as number;
  const untilWaiters = (name: string, n: number) =>
    eventually(
      () => waiters(name),
      (w) => w === n,
    );
  return { post, get, path, waiters, untilWaiters };
}
