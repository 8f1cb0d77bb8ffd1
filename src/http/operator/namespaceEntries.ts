import { NAMESPACE_PATTERN } from "../../limits.js";
import { settingEntries } from "../../wire/settingEntries.js";

/** One `namespace=value` entry of a setting, or where it is not one. */
export type NamespaceEntry = { ns: string; value: string } | { bad: true };

/**
 * A setting of comma-separated `namespace=value` entries (CORS_ORIGINS,
 * TOKEN_SECRETS), split once: each entry's namespace and value, or `bad` when
 * it has no namespace of the contract's pattern before its first "=". The
 * caller judges the value and names a bad entry by its position, never its
 * text (a value may be a secret).
 */
export function namespaceEntries(text: string): NamespaceEntry[] {
  return settingEntries(text).map((entry) => {
    const eq = entry.indexOf("=");
    const ns = entry.slice(0, Math.max(eq, 0));
    return eq < 1 || !NAMESPACE_PATTERN.test(ns) ? { bad: true as const } : { ns, value: entry.slice(eq + 1) };
  });
}
