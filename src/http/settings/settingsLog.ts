import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../appTypes.js";
import { SETTINGS, type Settings, settingsProblems } from "./settingsProblems.js";

/** Env objects already looked at (the runtime hands an isolate the same one each request). */
const seenEnvs = new WeakSet<object>();
/** Settings already said, by their values (kept in memory only; never logged). */
const saidSettings = new Set<string>();
/** The values of the settings last looked at, in SETTINGS' order (none before the first request). */
let lastValues: unknown[] | undefined;

/**
 * First on every route: the first request an isolate serves with given
 * settings logs, before anything else, one line naming each setting the
 * Worker ignores or cannot use (settingsProblems: the variable, the entry,
 * what is wrong; never a value). A Worker has no start of its own where env
 * is known, so this is as early as a deployed Worker can say it. Later
 * requests pay one WeakSet lookup (the same env object), or, handed a new
 * env object, a comparison of its settings with the last ones looked at.
 */
export const logSettingsOnce: MiddlewareHandler<AppEnv> = (c, next) =>
  // Not async: a request with settings already seen passes on without a promise of this layer's own.
  seenEnvs.has(c.env) || sameAsLast(c.env as unknown as Record<string, unknown>)
    ? next()
    : firstLook(c.env as unknown as Record<string, unknown>, next);

function sameAsLast(env: Record<string, unknown>): boolean {
  if (!lastValues) return false;
  for (let i = 0; i < SETTINGS.length; i++) if (env[SETTINGS[i]] !== lastValues[i]) return false;
  return true;
}

async function firstLook(env: Record<string, unknown>, next: () => Promise<void>): Promise<void> {
  seenEnvs.add(env);
  lastValues = SETTINGS.map((name) => env[name]);
  const said = JSON.stringify(SETTINGS.map((name) => env[name] ?? null));
  if (!saidSettings.has(said)) {
    saidSettings.add(said);
    const problems = await settingsProblems(env as Settings);
    if (problems.length) console.error(`holdfast settings: ${problems.map((p) => p.message).join(" | ")}`);
  }
  await next();
}
