import type { Context } from "hono";
import { InvalidInputError } from "../errors.js";
import { NAME_PATTERN } from "../limits.js";

/** The {name} path segment, checked against the contract's pattern. */
export function lockName(c: Context, param = "name"): string {
  const name = c.req.param(param) ?? "";
  if (!NAME_PATTERN.test(name)) {
    throw new InvalidInputError("invalid_name", "names match ^[A-Za-z0-9._:@+=-]{1,200}$ and are not . or ..");
  }
  return name;
}
