import { NotConfiguredError, UnauthorizedError } from "../../errors.js";
import { NAMESPACE_PATTERN } from "../../limits.js";
import { SCOPED_TOKEN_PREFIX } from "../../wire/scopedToken.js";
import type { Caller } from "../../operator/schemas.js";
import { settingEntries } from "../../wire/settingEntries.js";

export type { Caller };

/** API_KEYS gives no usable key: every /v1 call is refused until it is set right. */
class ApiKeysNotConfiguredError extends NotConfiguredError {
  override name = "ApiKeysNotConfiguredError";
  constructor(detail: string, remedy = "fix it in the API_KEYS secret") {
    super(`the service has no usable API keys (${detail}); ${remedy}`);
  }
}

interface KeyEntry extends Caller {
  digest: Uint8Array;
  /** The key, as sameKey compares it. */
  key: PaddedKey;
}

/** A key's length and its UTF-16 code units, zero-padded to a power of two (see sameKey). */
interface PaddedKey {
  length: number;
  codes: Uint16Array;
}

const KEY_NAME_PATTERN = /^[A-Za-z0-9_.@-]{1,64}$/;

const parsedKeys = new Map<string, Promise<KeyEntry[]>>();

/**
 * Resolves the caller of the bearer key: its namespace, role and name. Fails
 * closed: no API_KEYS, or a malformed one, refuses every request. The key
 * presented is compared with every configured key in constant time
 * (sameKey), so timing does not reveal how much of a key matched, nor which.
 */
export async function callerOf(authorization: string | undefined, apiKeys: string | undefined): Promise<Caller> {
  if (!apiKeys?.trim()) throw new ApiKeysNotConfiguredError("API_KEYS is not set", "set the API_KEYS secret");
  let entries = parsedKeys.get(apiKeys);
  if (!entries) {
    // Not logged here: the Worker's settings line says it once, by position only (src/http/settings/settingsLog.ts).
    entries = parseApiKeys(apiKeys);
    parsedKeys.set(apiKeys, entries);
  }
  const keys = await entries;
  const presented = bearerKey(authorization);
  if (!presented) throw new UnauthorizedError();
  let found: KeyEntry | undefined;
  for (const k of keys) if (sameKey(presented, k.key)) found = k;
  if (!found) throw new UnauthorizedError();
  return { namespace: found.namespace, role: found.role, keyName: found.keyName };
}

/** The key of an `Authorization: Bearer <key>` header, or undefined. */
export function bearerKey(authorization: string | undefined): string | undefined {
  return /^Bearer (.+)$/.exec(authorization ?? "")?.[1]?.trim() || undefined;
}

/**
 * Parses API_KEYS ("ns=key,ns2:admin:ops=key2": namespace[:role[:name]]=key,
 * role user or admin, user by default). A bad entry is named by its position,
 * never by its text: whatever it holds may be key material, and this message
 * reaches anonymous callers. One key in two namespaces is refused (which
 * namespace would it mean?); one namespace with two keys is a rotation.
 */
async function parseApiKeys(apiKeys: string): Promise<KeyEntry[]> {
  const entries: KeyEntry[] = [];
  const pairs = settingEntries(apiKeys);
  for (const [i, pair] of pairs.entries()) {
    const eq = pair.indexOf("=");
    const [namespace = "", role = "user", name, ...extra] = pair.slice(0, Math.max(eq, 0)).split(":");
    const key = pair.slice(eq + 1);
    // A key shaped like a scoped token would be read as one (app.ts tells them apart by that prefix alone).
    if (eq < 1 || !NAMESPACE_PATTERN.test(namespace) || key.length < 8 || key.startsWith(SCOPED_TOKEN_PREFIX)) {
      throw new ApiKeysNotConfiguredError(
        `API_KEYS entry ${i + 1} of ${pairs.length} is not namespace=key with a namespace of A-Z a-z 0-9 _ - and a key of 8+ characters (not starting ${SCOPED_TOKEN_PREFIX})`,
      );
    }
    if ((role !== "user" && role !== "admin") || extra.length || (name !== undefined && !KEY_NAME_PATTERN.test(name))) {
      throw new ApiKeysNotConfiguredError(
        `API_KEYS entry ${i + 1} of ${pairs.length} is not namespace[:role[:name]]=key with role user or admin and a name of 1-64 A-Z a-z 0-9 _ . @ -`,
      );
    }
    const digest = await sha256(key);
    const twin = entries.findIndex((e) => equalDigests(e.digest, digest));
    if (twin >= 0 && entries[twin].namespace !== namespace) {
      throw new ApiKeysNotConfiguredError(`API_KEYS entries ${twin + 1} and ${i + 1} give one key to two namespaces`);
    }
    // Listed twice with another role or name, which would the key have? (The last would win silently.)
    if (twin >= 0 && (entries[twin].role !== role || (name !== undefined && entries[twin].keyName !== name))) {
      throw new ApiKeysNotConfiguredError(`API_KEYS entries ${twin + 1} and ${i + 1} give one key two roles or names`);
    }
    // Unnamed: by its place in API_KEYS. Not by a digest of the key: the name is shown to every key of the
    // namespace (whoami, the audit log), and a digest's bits would help guess a short key offline.
    const keyName = name ?? (twin >= 0 ? entries[twin].keyName : `key-${i + 1}`);
    entries.push({ namespace, role, keyName, digest, key: padded(key) });
  }
  if (!entries.length) throw new ApiKeysNotConfiguredError("API_KEYS has no entries", "set the API_KEYS secret");
  return entries;
}

/** Whether API_KEYS is usable, for /healthz: undefined when it is, else why not. */
export async function apiKeysProblem(apiKeys: string | undefined): Promise<string | undefined> {
  try {
    await callerOf("Bearer -", apiKeys);
  } catch (err) {
    if (err instanceof ApiKeysNotConfiguredError) return err.message;
  }
  return undefined;
}

async function sha256(s: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(s)));
}

/** A key's code units, zero-padded to a power of two, so sameKey can index them with a mask. */
function padded(key: string): PaddedKey {
  let size = 1;
  while (size < key.length) size *= 2;
  const codes = new Uint16Array(size);
  for (let i = 0; i < key.length; i++) codes[i] = key.charCodeAt(i);
  return { length: key.length, codes };
}

/**
 * Whether the presented key is this configured one, in constant time: every
 * code unit of the presented key is compared (no early exit), each with the
 * configured key's at the same place (index masked into its padded codes, so
 * never out of bounds), and the lengths' difference is folded in. The work
 * depends on the presented key's length only, never on the configured key
 * or on where they differ. Done per request instead of a SHA-256 of the
 * presented key (an await and a digest each time); the digests stay for
 * API_KEYS' own checks.
 */
function sameKey(presented: string, { length, codes }: PaddedKey): boolean {
  const mask = codes.length - 1;
  let diff = presented.length ^ length;
  for (let i = 0; i < presented.length; i++) diff |= presented.charCodeAt(i) ^ codes[i & mask];
  return diff === 0;
}

function equalDigests(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}
