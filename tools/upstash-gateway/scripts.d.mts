// Types for scripts.mjs, so TypeScript (the bench) can import it without allowJs.
// Keep in sync with the JSDoc in scripts.mjs.

/** The script as redis-server 7.0 runs it: allow-key-locking taken out of its first line; null when it does not carry the flag. */
export function withoutKeyLockingFlag(text: string): string | null;
