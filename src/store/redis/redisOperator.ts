import { InvalidInputError, NotSupportedError } from "../../errors.js";
import { AUDIT_KEEP_MS, type AuditEntry, type AuditRecord, type NamePage, type OperatorOps } from "../OperatorOps.js";
import type { RedisKinds } from "./RedisKinds.js";
import type { ScriptRunner } from "./ScriptRunner.js";

/** Keys SCAN looks at per call (Redis's COUNT hint): the whole database's keys, not just this namespace's. */
const SCAN_COUNT = 1000;
/** SCAN calls one page may make before it answers what it found (bounds a page's time on a big database). */
const SCANS_PER_PAGE = 12;

/**
 * Listing and the audit log on Redis, by plain commands that no lock script
 * shares a key with (key locking, docs/DESIGN.md).
 *
 * Listing is SCAN MATCH over the kind's main keys of the namespace
 * (`hf:{mx:<ns>:<prefix>*}`; a mutex's hash outlives its lease, with its
 * last fence, and a lapsed lease's lock-delay): nothing is written for it,
 * so it costs the lock operations nothing. A page holds at most `limit` names and ends between
 * SCAN steps (a step that finds more names than the page has room for is
 * taken again with a smaller COUNT), so its cursor is SCAN's own; except
 * where one hash bucket alone holds more names than the page has room for:
 * then the cursor also names the last name answered and a hash of the
 * bucket's names up to it, and the next page takes that bucket again and
 * leaves those names out if they are the same (if keys changed meanwhile,
 * they are answered again). As with SCAN itself, a name held through the
 * whole listing is answered at least once (twice only where SCAN repeats
 * one, or a bucket split over pages changed); one that came or went
 * meanwhile may or may not be.
 *
 * The audit log is one stream per namespace, `hf:audit:{<ns>}`: XADD with
 * Redis's own time as the entry id, trimmed by MINID to AUDIT_KEEP_MS and
 * expiring that long after its last entry.
 */
export function redisOperator(scripts: ScriptRunner, kinds: RedisKinds): OperatorOps {
  return {
    async names(ns, kind, { prefix, limit, cursor }): Promise<NamePage> {
      const at = decodeScanCursor(cursor);
      const redisKind = kinds.get(kind);
      if (!redisKind) throw new NotSupportedError(`this store has no kind ${kind}`);
      const { mainKey } = redisKind;
      // hf:{mx:<ns>:<prefix>*}: a lock's main key says it may be listed (its state, inspected, says whether it is).
      const pattern = mainKey({ ns: globEscape(ns), name: `${globEscape(prefix)}*` });
      const head = mainKey({ ns, name: "" }).slice(0, -1); // hf:{mx:<ns>: - the key up to the name
      // The names of the main keys SCAN found, in order (MATCH's * may also take a key of another shape).
      const namesOf = async (keys: string[]): Promise<string[]> => {
        const names = new Set<string>();
        for (const key of keys) {
          if (!key.startsWith(head) || !key.endsWith("}")) continue;
          const name = key.slice(head.length, -1);
          if (key === mainKey({ ns, name })) names.add(name);
        }
        return [...names].sort();
      };
      const names: string[] = [];
      let scan = at.scan;
      let count = at.within ? 1 : SCAN_COUNT;
      let within = at.within;
      for (let calls = 0; calls < SCANS_PER_PAGE; calls++) {
        const [reply, keys] = await scripts.command("scan", (redis) => redis.scan(scan, { match: pattern, count }));
        const found = await namesOf(keys);
        let batch = found;
        if (within) {
          // The rest of one bucket an earlier page answered in part (the same SCAN call again): its names up to
          // the last answered are left out only if they are exactly those answered; else the keys changed, and
          // they are answered again rather than a name held throughout lost.
          const { last, hash } = within;
          if (namesHash(found.filter((name) => name <= last)) === hash) batch = found.filter((name) => name > last);
          within = undefined;
        }
        const room = limit - names.length;
        if (batch.length > room) {
          // A page ends between SCAN steps: the same step again, smaller (COUNT bounds the keys one step looks
          // at), until what it finds fits.
          if (count > 1) {
            count = Math.max(1, Math.min(room, Math.floor(count / 2)));
            continue;
          }
          if (names.length) break; // the next page starts with this step, with all its room
          // One hash bucket alone holds more names than the page: its first names in order, and a cursor that
          // takes the same bucket again (COUNT 1 from the same cursor) for the rest.
          const part = batch.slice(0, room);
          const last = part[part.length - 1];
          return { names: part, cursor: encodeScanCursor(scan, { last, hash: namesHash(found.filter((name) => name <= last)) }) };
        }
        names.push(...batch);
        scan = String(reply);
        if (scan === "0") return { names, cursor: null };
        if (names.length >= limit) break;
        count = Math.min(SCAN_COUNT, count * 2); // back up gradually: a small page on a big database
      }
      return { names, cursor: encodeScanCursor(scan) };
    },

    async appendAudit(ns, record: AuditRecord): Promise<AuditEntry> {
      const key = auditKey(ns);
      const entry = JSON.stringify(record);
      // One round trip. The entry's id is Redis's time; the trim bound may be this clock's (MINID ~ is approximate
      // anyway, and reads leave out entries past their time by the same clock).
      const minId = `${Date.now() - AUDIT_KEEP_MS}-0`;
      const [id] = (await scripts.command("audit append", (redis) =>
        redis
          .pipeline()
          .xadd(key, "*", { e: entry }, { trim: { type: "MINID", threshold: minId, comparison: "~" } })
          .pexpire(key, AUDIT_KEEP_MS)
          .exec(),
      )) as [string, number];
      return { id, at: Number(id.split("-")[0]), ...record };
    },

    async audit(ns, { limit, cursor }) {
      if (cursor !== undefined && !/^\d{1,20}-\d{1,20}$/.test(cursor)) {
        throw new InvalidInputError("invalid_cursor", "cursor is not one this listing answered");
      }
      const end = cursor === undefined ? "+" : `(${cursor}`;
      // Entries past their time are not shown even before the next append trims them (this clock is close enough).
      const oldest = `${Date.now() - AUDIT_KEEP_MS}-0`;
      const rows = await scripts.command("audit list", (redis) => redis.xrevrange(auditKey(ns), end, oldest, limit));
      const entries = streamEntries(rows).map(({ id, e }) => ({ id, at: Number(id.split("-")[0]), ...(JSON.parse(e) as AuditRecord) }));
      entries.sort((a, b) => compareStreamIds(b.id, a.id));
      return { entries, cursor: entries.length === limit ? entries[entries.length - 1].id : null };
    },
  };
}

/**
 * XREVRANGE's entries as (id, field e): a client with automatic
 * deserialization (the library's users may have it) answers an object by id
 * with e parsed; the Worker's client answers Redis's own list of [id, [field,
 * value, ...]].
 */
function streamEntries(rows: unknown): Array<{ id: string; e: string }> {
  if (Array.isArray(rows)) {
    return (rows as Array<[string, string[]]>).map(([id, fields]) => ({ id, e: String(fields[fields.indexOf("e") + 1]) }));
  }
  return Object.entries(rows as Record<string, { e: unknown }>).map(([id, f]) => ({ id, e: typeof f.e === "string" ? f.e : JSON.stringify(f.e) }));
}

function auditKey(ns: string): string {
  return `hf:audit:{${ns}}`;
}

function compareStreamIds(a: string, b: string): number {
  const [am, as] = a.split("-").map(BigInt);
  const [bm, bs] = b.split("-").map(BigInt);
  return am === bm ? Number(as - bs) : am < bm ? -1 : 1;
}

/** Namespaces and names hold no glob characters today (their patterns), but a pattern must not depend on that. */
function globEscape(s: string): string {
  return s.replace(/[*?[\]\\]/g, "\\$&");
}

/** Where a page that ended inside a SCAN step stopped: its last name, and a hash of the step's names up to it. */
type WithinStep = { last: string; hash: string };

/**
 * A page's cursor: `s` and the SCAN cursor the next page goes on from; after
 * a page that ended inside a step, also `.<hash>.<last name in hex>` (hex
 * keeps the cursor free of characters a URL would need escaped).
 */
function encodeScanCursor(scan: string, within?: WithinStep): string {
  if (!within) return `s${scan}`;
  const hex = [...new TextEncoder().encode(within.last)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `s${scan}.${within.hash}.${hex}`;
}

function decodeScanCursor(cursor: string | undefined): { scan: string; within?: WithinStep } {
  if (cursor === undefined) return { scan: "0" };
  const m = /^s(\d{1,20})(?:\.([0-9a-f]{8})\.((?:[0-9a-f]{2}){1,200}))?$/.exec(cursor);
  if (!m) throw new InvalidInputError("invalid_cursor", "cursor is not one this listing answered");
  if (m[2] === undefined) return { scan: m[1] };
  const bytes = Uint8Array.from(m[3].match(/../g)!.map((h) => Number.parseInt(h, 16)));
  return { scan: m[1], within: { last: new TextDecoder().decode(bytes), hash: m[2] } };
}

/** FNV-1a (32 bits) of names in order: tells whether a step's names up to a point are the ones a page answered. */
function namesHash(names: string[]): string {
  let h = 0x811c9dc5;
  for (const ch of names.join("\n")) {
    h ^= ch.charCodeAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}
