// Types for sharedBundle.mjs, so the test setup (TypeScript) can import it without allowJs.

/** Serves this repository's Worker bundle to the run's test processes (HOLDFAST_WORKER_BUNDLE_URL), on 127.0.0.1, until closed. */
export function startBundleServer(): Promise<{ url: string; close: () => Promise<void> }>;
