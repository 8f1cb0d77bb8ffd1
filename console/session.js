// The API key of this tab. Kept in sessionStorage only: it survives a reload
// of this tab but not the tab itself, is never shared with other tabs, and
// never goes into a URL (URLs end up in logs and in history).
const STORAGE_KEY = "holdfast.console.key";

/** The key signed in with, or null. */
export function currentKey() {
  return sessionStorage.getItem(STORAGE_KEY);
}

export function keepKey(key) {
  sessionStorage.setItem(STORAGE_KEY, key);
}

export function forgetKey() {
  sessionStorage.removeItem(STORAGE_KEY);
}
