// Types for webhook-receivers.mjs, so TypeScript tests can import it without allowJs.
export function startWebhookReceivers(): Promise<{ url: string; close(): Promise<void> }>;
