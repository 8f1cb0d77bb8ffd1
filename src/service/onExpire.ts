import type { Env } from "../env.js";
import { InvalidInputError } from "../errors.js";
import { onExpireTargetProblem } from "../wire/onExpireTarget.js";

/**
 * An onExpire watch is refused up front when notifications could not be
 * signed, or may not go where it points (see onExpireTarget.ts).
 */
export function checkOnExpire(env: Env, ns: string, url: string): void {
  if (!env.WEBHOOK_SECRET) {
    throw new InvalidInputError("invalid_on_expire", "expiry notifications need the service's WEBHOOK_SECRET, which is not set");
  }
  const problem = onExpireTargetProblem(url, ns, env);
  if (problem) throw new InvalidInputError("invalid_on_expire", problem);
}
