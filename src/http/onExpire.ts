import type { Env } from "../env.js";
import { InvalidInputError } from "../errors.js";

/** An onExpire watch is refused up front when notifications could not be signed. */
export function requireWebhookSecret(env: Env): void {
  if (!env.WEBHOOK_SECRET) {
    throw new InvalidInputError("invalid_on_expire", "expiry notifications need the service's WEBHOOK_SECRET, which is not set");
  }
}
