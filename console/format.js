// How values read on screen. Every answer is rendered defensively: a field a
// kind or an older service does not send reads "-", never "undefined".
export const NONE = "-";

/** Any answer value as text. */
export function text(value) {
  if (value === undefined || value === null || value === "") return NONE;
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (Array.isArray(value)) return value.length ? value.map(text).join(", ") : NONE;
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** A store time (ms since the epoch) as UTC, to the millisecond: "2026-11-25 16:40:01.123". */
export function time(ms) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return NONE;
  return new Date(ms).toISOString().replace("T", " ").replace("Z", "");
}

/**
 * Time left until a store time, from this browser's clock: "12.3 s", "4 min 05 s".
 * The store's clock (Redis TIME, or the Durable Object's) and the browser's may
 * differ by the browser's error; the detail panel shows the time itself too.
 */
export function timeLeft(ms, now = Date.now()) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return NONE;
  const left = ms - now;
  if (left <= 0) return "ended";
  if (left < 60_000) return `${(left / 1000).toFixed(1)} s`;
  const s = Math.floor(left / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")} min`;
}

/** "1 holder", "3 holders". */
export function plural(n, noun) {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
