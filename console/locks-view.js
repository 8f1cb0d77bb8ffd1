// The main view: a table per kind of the namespace's locks, filtered by a
// name prefix, each paged by the service's cursor ("More" shows one more
// page and keeps it in the refresh). A name is a button that opens the
// detail panel.
//
// The service's `limit` counts the names it looks at, and a page may come
// back short, even empty, with a cursor to go on from (on Redis a page is a
// few SCAN calls over the whole database). So a page of the console is
// PAGE_SIZE locks gathered over as many calls as that takes, each asking only
// for what is still missing (so never more than a page), within
// CALLS_PER_PAGE calls: past that, "More" goes on where it stopped.
import { ApiError, api, query } from "./api.js";
import { byId, countdown, el, setCountdown, syncRows } from "./dom.js";
import { KINDS } from "./kinds.js";

// Each listed lock costs the service one read of that lock, and the view re-reads its pages every second.
const PAGE_SIZE = 25;
const CALLS_PER_PAGE = 8;
/** The most a listing call may ask for (docs/API.md: limit 1 .. 100). */
const MAX_LIMIT = 100;

/**
 * @param {{ onOpen: (def: object, name: string, opener: HTMLElement) => void, onUnauthorized: () => void }} hooks
 */
export function createLocksView({ onOpen, onUnauthorized }) {
  const sections = KINDS.map((def) => buildSection(def, onOpen, (section) => refreshKind(section)));
  byId("kind-tables").replaceChildren(...sections.map((s) => s.root));
  let prefix = "";
  // Bumped by reset and by a new filter: an answer to an older question is dropped.
  let generation = 0;
  let open;

  async function refreshKind(section) {
    const asked = generation;
    const items = [];
    // On Redis a name may come twice across pages (SCAN's rule): shown once.
    const seen = new Set();
    const wanted = PAGE_SIZE * section.pages;
    let cursor = null;
    let calls = 0;
    try {
      do {
        const page = await api(`${section.def.path}${query({ prefix, limit: Math.min(wanted - items.length, MAX_LIMIT), cursor })}`);
        if (asked !== generation) return;
        for (const item of Array.isArray(page?.items) ? page.items : []) {
          if (typeof item?.name !== "string" || seen.has(item.name)) continue;
          seen.add(item.name);
          items.push(item);
        }
        cursor = typeof page?.cursor === "string" && page.cursor ? page.cursor : null;
        calls++;
      } while (cursor && items.length < wanted && calls < CALLS_PER_PAGE * section.pages);
    } catch (err) {
      if (asked !== generation) return;
      if (err instanceof ApiError && err.status === 401) return onUnauthorized();
      section.problem.textContent = `Could not list ${section.def.title.toLowerCase()}: ${err.message}`;
      section.problem.hidden = false;
      return;
    }
    section.problem.hidden = true;
    section.render(items, cursor !== null, prefix, open);
  }

  return {
    refresh: () => Promise.all(sections.map(refreshKind)),
    /** A new prefix starts every table at its first page again. */
    filter(newPrefix) {
      prefix = newPrefix;
      generation++;
      for (const s of sections) s.pages = 1;
      return Promise.all(sections.map(refreshKind));
    },
    /** Marks the row whose detail is open (or none). */
    markOpen(kind, name) {
      open = kind === undefined ? undefined : { kind, name };
      for (const s of sections) s.markOpen(open);
    },
    reset() {
      generation++;
      prefix = "";
      open = undefined;
      for (const s of sections) s.clear();
    },
  };
}

function buildSection(def, onOpen, onMore) {
  const titleId = `kind-${def.kind}-title`;
  const heading = el("h3", { id: titleId }, def.title);
  const summary = el("span", { class: "count" });
  heading.append(" ", summary);
  const tbody = el("tbody");
  const head = el("tr", {}, el("th", { scope: "col" }, "Name"), ...def.columns.map((c) => el("th", { scope: "col" }, c.label)));
  const table = el("table", {}, el("caption", { class: "visually-hidden" }, def.title), el("thead", {}, head), tbody);
  const empty = el("p", { class: "note" });
  const problem = el("p", { class: "error", hidden: true });
  const more = el("button", { type: "button", class: "secondary", hidden: true }, `More ${def.title.toLowerCase()}`);
  const root = el("section", { class: "kind", "aria-labelledby": titleId }, heading, el("div", { class: "scroll" }, table), empty, problem, more);

  const section = {
    def,
    root,
    problem,
    pages: 1,
    render(items, hasMore, prefix, open) {
      syncRows(
        tbody,
        items,
        (item) => item.name,
        makeRow,
        (row, item) => fillRow(row, item, open),
      );
      table.hidden = items.length === 0;
      empty.hidden = items.length > 0;
      empty.textContent = prefix ? `No ${def.title.toLowerCase()} whose name starts with ${prefix}.` : `No ${def.title.toLowerCase()}.`;
      summary.textContent = `(${items.length}${hasMore ? "+" : ""})`;
      more.hidden = !hasMore;
    },
    markOpen(open) {
      for (const row of tbody.rows) markRow(row, open);
    },
    clear() {
      tbody.replaceChildren();
      summary.textContent = "";
      empty.textContent = "";
      problem.hidden = true;
      more.hidden = true;
      section.pages = 1;
    },
  };
  more.addEventListener("click", async () => {
    const shown = tbody.rows.length;
    section.pages++;
    more.disabled = true;
    await onMore(section);
    more.disabled = false;
    // Keyboard users go on from the first row the page added (the button may be gone now).
    tbody.rows[shown]?.querySelector("button")?.focus();
  });

  function makeRow(item) {
    const button = el("button", { type: "button", class: "link", "aria-controls": "detail", "aria-expanded": "false" }, item.name);
    button.addEventListener("click", () => onOpen(def, item.name, button));
    const cells = def.columns.map((c) => el("td", c.whole ? { class: "whole" } : {}, c.at ? countdown(c.at(item)) : ""));
    return el("tr", {}, el("th", { scope: "row" }, button), ...cells);
  }

  function fillRow(row, item, open) {
    def.columns.forEach((c, n) => {
      const cell = row.cells[n + 1];
      if (c.at) {
        setCountdown(cell.firstElementChild, c.at(item));
        return;
      }
      // Text that did not change keeps its node: nothing for assistive technology to re-read.
      const value = c.value(item);
      if (cell.textContent !== value) cell.textContent = value;
    });
    markRow(row, open);
  }

  function markRow(row, open) {
    const isOpen = open?.kind === def.kind && open.name === row.dataset.key;
    row.classList.toggle("open", isOpen);
    row.querySelector("button").setAttribute("aria-expanded", String(isOpen));
  }

  return section;
}
