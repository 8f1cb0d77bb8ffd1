// DOM helpers. Text is only ever set as text (textContent, or a string
// appended, which becomes a text node): lock names, holder labels, reasons and
// the service's messages are written by whoever holds a key, and must never be
// parsed as markup. Nothing here takes HTML.
import { timeLeft } from "./format.js";

export const byId = (id) => document.getElementById(id);

/**
 * A new element with fixed attributes and children (strings become text nodes).
 * @param {string} tag @param {Record<string, string | boolean | undefined>} [attrs] @param {...(Node | string)} children
 */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === true) node.setAttribute(name, "");
    else if (typeof value === "string") node.setAttribute(name, value);
  }
  node.append(...children);
  return node;
}

/** A span that counts down to a store time, kept current by tickCountdowns. */
export function countdown(ms) {
  const span = el("span", { class: "countdown" });
  setCountdown(span, ms);
  return span;
}

export function setCountdown(node, ms) {
  if (typeof ms === "number" && Number.isFinite(ms)) node.dataset.until = String(ms);
  else delete node.dataset.until;
  node.textContent = timeLeft(ms);
}

/** Every countdown on the page, from one clock reading. */
export function tickCountdowns(now = Date.now()) {
  for (const node of document.querySelectorAll("[data-until]")) node.textContent = timeLeft(Number(node.dataset.until), now);
}

const statusLine = () => byId("status");

/** A message for everyone: shown in the status line, and read out by screen readers (it is a live region). */
export function say(message, { error = false } = {}) {
  const line = statusLine();
  line.textContent = message;
  line.classList.toggle("error", error);
}

/**
 * Makes a table body show `items` in order, one row per key, reusing the
 * rows it already has: a row that stays keeps its element, so keyboard focus
 * and a screen reader's place survive the once-a-second refresh.
 * @template T
 * @param {HTMLTableSectionElement} tbody @param {T[]} items @param {(item: T) => string} keyOf
 * @param {(item: T) => HTMLTableRowElement} makeRow @param {(row: HTMLTableRowElement, item: T) => void} fillRow
 */
export function syncRows(tbody, items, keyOf, makeRow, fillRow) {
  const left = new Map([...tbody.rows].map((row) => [row.dataset.key, row]));
  const seen = new Set();
  let at = 0;
  for (const item of items) {
    const key = keyOf(item);
    // A name can come twice when locks change between two pages' reads; show it once.
    if (seen.has(key)) continue;
    seen.add(key);
    let row = left.get(key);
    left.delete(key);
    if (!row) {
      row = makeRow(item);
      row.dataset.key = key;
    }
    fillRow(row, item);
    if (tbody.rows[at] !== row) tbody.insertBefore(row, tbody.rows[at] ?? null);
    at++;
  }
  for (const row of left.values()) row.remove();
}
