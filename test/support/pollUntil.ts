/**
 * Reads until `ok` holds, and throws when `timeoutMs` passes first, with the
 * condition and the last value read: a wait for a condition that never came
 * fails where it waited, not at some later check (or not at all). Plain
 * TypeScript, so both the Node tests (`until`) and the workerd tests
 * (`eventually`) use it.
 */
export async function pollUntil<T>(read: () => T | Promise<T>, ok: (v: T) => boolean, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`waited ${timeoutMs} ms for ${ok.toString()}; last saw ${shown(v)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function shown(v: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(v) ?? String(v);
  } catch {
    text = String(v);
  }
  return text.length > 2000 ? `${text.slice(0, 2000)}...` : text;
}
