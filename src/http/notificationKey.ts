import { honoApp } from "./honoApp.js";
import * as z from "zod/mini";
import { namespaceKey, SIGNATURE_HEADER } from "../wire/signature.js";
import { NotConfiguredError } from "../errors.js";

export const notificationKeyResponse = z.object({
  namespace: z.string(),
  /** Verifies this namespace's expiry notifications (verifyNotification's `key`). */
  key: z.string(),
  algorithm: z.literal("HMAC-SHA256"),
  header: z.literal(SIGNATURE_HEADER),
});

/**
 * GET /v1/notifications/key: the caller's namespace's key for verifying its
 * expiry notifications. Each namespace has its own (derived from
 * WEBHOOK_SECRET), so a tenant can verify its own and forge no one else's.
 */
export const notificationKeyRoutes = honoApp();

notificationKeyRoutes.get("/key", async (c) => {
  const secret = c.env.WEBHOOK_SECRET;
  if (!secret) throw new NotConfiguredError("WEBHOOK_SECRET is not set, so there are no expiry notifications");
  const body: z.infer<typeof notificationKeyResponse> = {
    namespace: c.var.ns,
    key: await namespaceKey(secret, c.var.ns),
    algorithm: "HMAC-SHA256",
    header: SIGNATURE_HEADER,
  };
  return c.json(body, 200);
});
