import { honoApp } from "../honoApp.js";
import * as z from "zod/mini";
import { intFrom } from "../../wire/schemas.js";
import { SCOPED_TOKEN_MAX_TTL_MS, SCOPED_TOKEN_MIN_TTL_MS, signClaims, TOKEN_OPERATIONS } from "../../wire/scopedToken.js";
import type { Operations } from "../openapi/openapiOps.js";
import { WRITE_ERRORS } from "../openapi/openapiOps.js";
import { readBody } from "../readBody.js";
import { signingSecret } from "./scopedTokens.js";

/** POST /v1/tokens: what a scoped token may do, and for how long. */
const tokenBody = z.strictObject({
  /** Every name the token touches starts with this. */
  prefix: z.string().check(z.regex(/^[A-Za-z0-9._:@+=-]{1,200}$/)),
  /** Any of acquire, release, heartbeat, wait, inspect (never listing, the audit log or force release). */
  operations: z.array(z.enum(TOKEN_OPERATIONS)).check(z.minLength(1), z.maxLength(TOKEN_OPERATIONS.length)),
  /** How long it lives: 1 s to 24 h. */
  ttlMs: intFrom(SCOPED_TOKEN_MIN_TTL_MS, SCOPED_TOKEN_MAX_TTL_MS),
});

const tokenResponse = z.object({
  /** The bearer for a browser: Authorization: Bearer <token>, or a wait socket's key subprotocol. */
  token: z.string(),
  expiresAt: z.int(),
  namespace: z.string(),
  prefix: z.string(),
  operations: z.array(z.enum(TOKEN_OPERATIONS)),
});

/**
 * A namespace key mints a scoped token for a browser (docs/API.md, "Scoped
 * tokens"), signed with the namespace's first TOKEN_SECRETS secret. A token
 * cannot mint another (src/http/access/scopedTokens.ts refuses it this path).
 */
export const tokenRoutes = honoApp();

tokenRoutes.post("/", async (c) => {
  const body = await readBody(c, tokenBody);
  const secret = signingSecret(c.env.TOKEN_SECRETS, c.var.ns);
  const operations = [...new Set(body.operations)];
  const claims = { namespace: c.var.ns, prefix: body.prefix, operations, expiresAt: Date.now() + body.ttlMs };
  const answer: z.infer<typeof tokenResponse> = { token: await signClaims(secret, claims), ...claims };
  return c.json(answer, 200);
});

/** Its operation in the OpenAPI document. */
export const tokenOperations: Operations = {
  "/v1/tokens": {
    post: {
      operationId: "mintToken",
      summary: "A scoped, short-lived token for a browser: a name prefix, some operations, up to 24 h (namespace keys only)",
      body: ["TokenRequest", tokenBody],
      ok: [200, "TokenResponse", tokenResponse],
      errors: [...WRITE_ERRORS.filter((s) => s !== 409)],
    },
  },
};
