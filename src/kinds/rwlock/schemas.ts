import * as z from "zod/mini";
import { leaseFields, lockAcquireFields, lockState } from "../../wire/schemas.js";

/** The read-write lock's request and response schemas: the routes validate with them, the OpenAPI document is made from them. */
export const rwAcquireBody = z.strictObject(lockAcquireFields);

const mode = z.enum(["read", "write"]);
export const rwGrant = z.object({ name: z.string(), token: z.string(), mode, ...leaseFields, count: z.int() });
export const rwReleaseResponse = z.object({ released: z.boolean(), mode, count: z.int() });
export const rwStateResponse = lockState({
  mode: z.enum(["free", "read", "write"]),
  readers: z.int(),
  writer: z.boolean(),
  fence: z.nullable(z.int()),
  /** The labels of the first holders to end (at most 10; holders without one left out). */
  holderLabels: z.array(z.string()),
  /** When the first holder's lease ends (null when nobody holds). */
  expiresAt: z.nullable(z.int()),
});
