import { ForbiddenError, NotConfiguredError, UnauthorizedError } from "../../errors.js";
import { namespaceEntries } from "../operator/namespaceEntries.js";
import {
  SCOPED_TOKEN_MAX_TTL_MS,
  SCOPED_TOKEN_PREFIX,
  type ScopedTokenClaims,
  TOKEN_SECRET_MIN_CHARS,
  type TokenOperation,
  verifyScopedToken,
} from "../../wire/scopedToken.js";
import type { Caller } from "./auth.js";
import { type KindApi, operationAt } from "../kindApi.js";

/**
 * The Worker's side of scoped tokens (src/wire/scopedToken.ts has the
 * format): who a token's bearer is, and whether the request is inside the
 * token's scope. Only a bearer that starts with the token prefix comes here,
 * so a namespace key's request pays one startsWith for all of this.
 */

/** The key name a token's caller has (no audit entry or console shows it: tokens may not force-release). */
const TOKEN_KEY_NAME = "scoped-token";

/** Clocks differ a little between the server that signed offline and the Worker. */
const CLOCK_SKEW_MS = 60_000;

export const isScopedToken = (bearer: string | undefined): bearer is string => bearer?.startsWith(SCOPED_TOKEN_PREFIX) === true;

/**
 * The caller a scoped token stands for: the namespace it names, role user,
 * and its scope. A token no secret of its namespace signed, or malformed:
 * 401; expired (or claiming more than a day ahead): 401 saying so.
 */
export async function callerOfScopedToken(token: string, tokenSecrets: string | undefined): Promise<Caller> {
  const secrets = secretsByNamespace(tokenSecrets);
  const claims = await verifyScopedToken(token, (ns) => secrets.get(ns) ?? []);
  if (!claims) throw new UnauthorizedError("this token was not signed by this service (bad signature, unknown namespace or malformed)", "bad_token");
  const now = Date.now();
  if (claims.expiresAt <= now) {
    throw new UnauthorizedError(`this token expired at ${new Date(claims.expiresAt).toISOString()}: ask for a new one`, "token_expired");
  }
  if (claims.expiresAt - now > SCOPED_TOKEN_MAX_TTL_MS + CLOCK_SKEW_MS) {
    throw new UnauthorizedError("this token lives longer than 24 h, which no token may", "bad_token");
  }
  return { namespace: claims.namespace, role: "user", keyName: TOKEN_KEY_NAME, scope: claims };
}

/** The secret a namespace signs new tokens with (its first in TOKEN_SECRETS); 503 not_configured without one. */
export function signingSecret(tokenSecrets: string | undefined, namespace: string): string {
  const secret = secretsByNamespace(tokenSecrets).get(namespace)?.[0];
  if (!secret) throw new NotConfiguredError(`TOKEN_SECRETS has no secret for namespace ${namespace}, so it cannot mint scoped tokens`);
  return secret;
}

const parsedSecrets = new Map<string, Map<string, string[]>>();

/** What is wrong with TOKEN_SECRETS (an entry named by position, never its text), or undefined when nothing is. */
export function tokenSecretsProblem(tokenSecrets: string | undefined): string | undefined {
  try {
    secretsByNamespace(tokenSecrets);
    return undefined;
  } catch (err) {
    if (err instanceof NotConfiguredError) return err.message;
    throw err;
  }
}

/**
 * TOKEN_SECRETS, "ns=secret,ns=older-secret,ns2=...", by namespace in the
 * order listed (the first signs, every one verifies: a rotation lists the
 * new one first and drops the old after a day; dropping all revokes every
 * token of the namespace). A bad entry is named by position, never by text,
 * and refuses tokens and minting alike (503): the keys' requests go on.
 */
function secretsByNamespace(tokenSecrets: string | undefined): Map<string, string[]> {
  const text = tokenSecrets ?? "";
  let parsed = parsedSecrets.get(text);
  if (parsed) return parsed;
  parsed = new Map();
  const entries = namespaceEntries(text);
  for (const [i, entry] of entries.entries()) {
    if ("bad" in entry || entry.value.length < TOKEN_SECRET_MIN_CHARS) {
      throw new NotConfiguredError(
        `TOKEN_SECRETS entry ${i + 1} of ${entries.length} is not namespace=secret with a secret of ${TOKEN_SECRET_MIN_CHARS}+ characters`,
      );
    }
    parsed.set(entry.ns, [...(parsed.get(entry.ns) ?? []), entry.value]);
  }
  parsedSecrets.set(text, parsed);
  return parsed;
}

/** What a request does with which name, as a token's scope sees it; undefined: nothing a token may ever do. */
interface TokenRequest {
  needs: readonly TokenOperation[];
  name: string;
}

/**
 * Refuses (403 forbidden, `reason` operation or name) a request outside the
 * token's scope. Deny by default: only the kinds' lock paths below are
 * anything a token may do; listing, the audit log, force release, whoami,
 * the notification key and minting tokens are none of them.
 */
export function checkTokenScope(method: string, url: string, scope: ScopedTokenClaims, apis: readonly KindApi[]): void {
  const pathname = new URL(url).pathname;
  const request = tokenRequestOf(method, pathname, apis);
  const allowed = `this token allows ${scope.operations.join(", ")} on names starting with "${scope.prefix}"`;
  if (!request) throw new ForbiddenError(`${allowed}; ${method} ${pathname} is not for scoped tokens (use a namespace key)`, "operation");
  const missing = request.needs.filter((op) => !scope.operations.includes(op));
  if (missing.length) throw new ForbiddenError(`${allowed}; ${method} ${pathname} needs ${request.needs.join(" and ")}`, "operation");
  if (!request.name.startsWith(scope.prefix)) throw new ForbiddenError(`${allowed}; "${request.name}" does not start with it`, "name");
}

function tokenRequestOf(method: string, pathname: string, apis: readonly KindApi[]): TokenRequest | undefined {
  const at = operationAt(method, pathname, apis);
  if (!at) return undefined;
  let name: string;
  try {
    name = decodeURIComponent(at.name);
  } catch {
    return undefined;
  }
  // Watching a lock's state is reading it, as its GET does; every other step is the kind's operation's own.
  const needs = method === "GET" && at.step === "watch" ? WATCH_NEEDS : at.op?.needs;
  return needs && { needs, name };
}

const WATCH_NEEDS: readonly TokenOperation[] = ["inspect"];
