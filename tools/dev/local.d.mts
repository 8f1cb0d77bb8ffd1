// Types for local.mjs, so TypeScript tests can import it without allowJs. Keep in sync with local.mjs.
export const LOCAL_API_KEY: string;
export const LOCAL_NAMESPACE: string;
export function busyPortHint(port: number, command: string): Promise<string | null>;
export function untilAnswers(url: string, gaveUp: () => boolean): Promise<void>;
