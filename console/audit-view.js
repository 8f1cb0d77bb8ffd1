// The audit log view: the namespace's force releases, newest first. The first
// page is re-read while the view is shown and new entries go on top; "More"
// appends the next older page (by the service's cursor).
import { ApiError, api, query } from "./api.js";
import { byId, el } from "./dom.js";
import { text, time } from "./format.js";

const PAGE_SIZE = 50;

/** @param {{ onUnauthorized: () => void }} hooks */
export function createAuditView({ onUnauthorized }) {
  const tbody = byId("audit-table").tBodies[0];
  const table = byId("audit-table");
  const empty = byId("audit-empty");
  const more = byId("audit-more");
  let cursor = null;
  let generation = 0;
  const shown = new Set();

  function row(entry) {
    const r = el(
      "tr",
      {},
      el("td", {}, time(entry.at)),
      el("td", {}, text(entry.keyName)),
      el("td", {}, text(entry.kind)),
      el("th", { scope: "row" }, text(entry.name)),
      el("td", {}, text(entry.holder)),
      el("td", {}, text(entry.fence)),
      el("td", {}, text(entry.released)),
      el("td", { class: "reason" }, text(entry.reason)),
    );
    r.dataset.key = String(entry.id);
    return r;
  }

  /** Adds entries not shown yet: newer ones on top (the first page), older ones below (a "More" page). */
  function add(entries, { onTop }) {
    const fresh = (Array.isArray(entries) ? entries : []).filter((e) => e && e.id !== undefined && !shown.has(String(e.id)));
    for (const e of fresh) shown.add(String(e.id));
    const rows = fresh.map(row);
    if (onTop) tbody.prepend(...rows);
    else tbody.append(...rows);
    table.hidden = tbody.rows.length === 0;
    empty.hidden = tbody.rows.length > 0;
  }

  async function read(pageCursor) {
    const asked = generation;
    try {
      const page = await api(`/v1/audit${query({ limit: PAGE_SIZE, cursor: pageCursor })}`);
      if (asked !== generation) return undefined;
      return page ?? {};
    } catch (err) {
      if (asked !== generation) return undefined;
      if (err instanceof ApiError && err.status === 401) onUnauthorized();
      else {
        empty.hidden = false;
        empty.textContent = `Could not read the audit log: ${err.message}`;
      }
      return undefined;
    }
  }

  more.addEventListener("click", async () => {
    const before = tbody.rows.length;
    more.disabled = true;
    const page = await read(cursor);
    more.disabled = false;
    if (!page) return;
    add(page.entries, { onTop: false });
    cursor = typeof page.cursor === "string" && page.cursor ? page.cursor : null;
    more.hidden = cursor === null;
    tbody.rows[before]?.querySelector("th")?.setAttribute("tabindex", "-1");
    tbody.rows[before]?.querySelector("th")?.focus();
  });

  return {
    /** Reads the newest page; the first read also sets where "More" goes on from. */
    async refresh() {
      const first = tbody.rows.length === 0 && cursor === null;
      const page = await read(null);
      if (!page) return;
      empty.textContent = "No entries.";
      add(page.entries, { onTop: true });
      if (first) {
        cursor = typeof page.cursor === "string" && page.cursor ? page.cursor : null;
        more.hidden = cursor === null;
      }
    },
    reset() {
      generation++;
      cursor = null;
      shown.clear();
      tbody.replaceChildren();
      more.hidden = true;
      empty.hidden = true;
    },
  };
}
