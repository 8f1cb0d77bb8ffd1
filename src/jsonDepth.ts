/** How deeply a JSON body (a stored response included) may nest: deeper is refused before it is parsed or validated. */
export const JSON_MAX_DEPTH = 64;

/**
 * The deepest nesting of arrays and objects in JSON text, found by scanning
 * (no parse, no recursion), so a hostile body cannot exhaust the stack of
 * whatever later walks it. Brackets inside strings do not count.
 */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c)
        i++; // backslash: skip the escaped character
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x5b || ch === 0x7b) {
      depth++;
      if (depth > max) max = depth;
    } else if (ch === 0x5d || ch === 0x7d) depth--;
  }
  return max;
}
