#!/usr/bin/env node
// Embeds every lock kind's Lua scripts (lua/<kind>/<op>.lua) into
// src/store/redis/scripts.generated.ts as "<kind>_<op>", each with the shared
// prelude (lua/prelude.lua: argument checks, Redis time)
// prepended (only the prelude functions the script calls, see preludeFor),
// so the Worker and the library (Node, Bun, Deno...) get the scripts without
// a file loader. A script with the line "-- uses: holders" also gets the
// functions it calls of lua/holders.lua (the per-holder leases the read-write
// lock and the semaphore share), picked the same way. The .lua files stay the
// single source of truth; runs before test, start, bench and build.
//
// Each script's body runs as a function whose reply (a flat list of
// name/value strings, or that list already as JSON text, say a remembered
// answer) goes back as one JSON text: a client that JSON-parses
// replies (@upstash/redis by default) then parses one string that is JSON,
// instead of trying, and failing with a thrown error, on every string of a
// list. ScriptRunner takes the reply either way. Each script's SHA-1 is
// computed here too, so a call is EVALSHA at once, with no digest to await.
// The fixed timings of src/limits.ts are written into every script as
// literals (withLimits), not arguments of every call.
//
// Every script's first line is `#!lua flags=allow-key-locking` (read-only
// ones, marked "-- flags: no-writes" in their header, `#!lua
// flags=no-writes,allow-key-locking`): without it Upstash runs a script under
// its database-wide lock, since it cannot know which keys the script uses;
// with it, only the keys in KEYS are locked, so scripts of different locks run
// side by side. Stock Redis refuses the flag; for it, ScriptRunner sends the
// same text with that first line emptied (plainScript), whose digest is here
// too (plainScriptSha1).
//
// The Worker's bundle carries the digests but not the texts (about 12 KiB of
// its 100 KiB gzip budget, issue 54): it sends EVALSHA, and needs a script's
// text only when Redis lacks it (NOSCRIPT: a new or flushed database), which
// it then reads from its static assets (src/worker/luaScriptAsset.ts), from
// console/lua-scripts.json written here: each shipped text under its SHA-1,
// so a bundle and assets of different builds fail loudly rather than run
// another script. The library takes the texts from the module (each marked
// pure, so a bundler drops them where nothing reads luaScripts).
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const luaDir = join(root, "lua");
const limits = limitsOf();
const preludeBlocks = blocksOf(readFileSync(join(luaDir, "prelude.lua"), "utf8"));
const holdersBlocks = blocksOf(readFileSync(join(luaDir, "holders.lua"), "utf8"));
const out = join(root, "src/store/redis/scripts.generated.ts");
const asset = join(root, "console/lua-scripts.json");
const PARAGRAPH = "\n\n";

const shippedByName = [];
const shas = [];
const plainShas = [];
const clocks = [];
for (const kind of readdirSync(luaDir, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort()) {
  const kindDir = join(luaDir, kind);
  for (const file of readdirSync(kindDir)
    .filter((f) => f.endsWith(".lua"))
    .sort()) {
    const name = `${kind}_${file.replace(/\.lua$/, "")}`;
    const body = readFileSync(join(kindDir, file), "utf8");
    const holders = /^-- uses: holders$/m.test(body);
    const [usual, rest] = splitAtPreludeMark(name, body);
    // Only a script that issues fences takes the caller's clock (fence_floor reads it), and only it gets the
    // block that takes it off ARGV: every other script's ARGV is one shorter (each costs Redis some work).
    const clock = /\bfence_floor\b/.test(body); // (holders.lua issues no fences of its own)
    // holders.lua's functions are picked like the prelude's, after them (they call the prelude's).
    const blocks = holders ? [...preludeBlocks, ...holdersBlocks] : preludeBlocks;
    const top = preludeFor(usual, undefined, clock, blocks);
    const below = rest === undefined ? "" : preludeFor(rest, new Set(top.taken), false, blocks);
    const code = rest === undefined ? body : `${usual}${below.text}\n${rest}`;
    const shipped = `${shebangOf(name, body)}\n${withoutCommentLines(withLimits(`${top.text}\n${bodyOf(name, code)}`))}`;
    shippedByName.push([name, shipped]);
    shas.push(`  ${name}: "${sha1(shipped)}",`);
    clocks.push(`  ${name}: ${clock},`);
    plainShas.push(`  ${name}: "${sha1(plainScript(shipped))}",`);
  }
}

// The scripts share most of their text (the prelude's functions, holders.lua), so the module keeps each
// paragraph (text between blank lines) once and every script as its paragraphs' numbers, joined back at
// load: the same text byte for byte (split and join by one separator undo each other), a third of the size
// in the Worker's bundle, which every cold start parses.
const paragraphs = [];
const paragraphIds = new Map();
const entries = shippedByName.map(([name, shipped]) => {
  const ids = shipped.split(PARAGRAPH).map((p) => {
    if (!paragraphIds.has(p)) {
      paragraphIds.set(p, paragraphs.length);
      paragraphs.push(p);
    }
    return paragraphIds.get(p);
  });
  if (ids.map((i) => paragraphs[i]).join(PARAGRAPH) !== shipped) throw new Error(`gen-lua-scripts: ${name} does not join back`);
  return `  ${name}: /* @__PURE__ */ script([${ids.join(",")}]),`;
});

const text = `// Generated by tools/gen-lua-scripts.mjs from lua/*/*.lua. Do not edit.\n/** Every script's paragraphs, each once (see tools/gen-lua-scripts.mjs). */\nconst paragraphs: readonly string[] = ${JSON.stringify(paragraphs)};\nconst script = (ids: number[]): string => ids.map((i) => paragraphs[i]).join(${JSON.stringify(PARAGRAPH)});\n\nexport const luaScripts = {\n${entries.join("\n")}\n} as const;\n\nexport type LuaScriptName = keyof typeof luaScripts;\n\n/** Each script's SHA-1, as Redis names it for EVALSHA. */\nexport const luaScriptSha1: Record<LuaScriptName, string> = {\n${shas.join("\n")}\n};\n\n/** Whether ScriptRunner appends the caller's clock to the script's ARGV (only scripts that issue fences read it). */\nexport const luaScriptTakesCallerClock: Record<LuaScriptName, boolean> = {\n${clocks.join("\n")}\n};\n\n/** Each script's SHA-1 without its flag line (plainScript), for Redis that refuses the flag. */\nexport const plainScriptSha1: Record<LuaScriptName, string> = {\n${plainShas.join("\n")}\n};\n\n/** The script for stock Redis: its first line (the flags) emptied, so line numbers stay. */\nexport function plainScript(script: string): string {\n  return script.slice(script.indexOf("\\n"));\n}\n`;
if (!existsSync(out) || readFileSync(out, "utf8") !== text) writeFileSync(out, text);
const assetText = `${JSON.stringify(Object.fromEntries(shippedByName.map(([, shipped]) => [sha1(shipped), shipped])))}\n`;
if (!existsSync(asset) || readFileSync(asset, "utf8") !== assetText) writeFileSync(asset, assetText);

function sha1(text) {
  return createHash("sha1").update(text, "utf8").digest("hex");
}

/** As plainScript in the generated module: the first line emptied. */
function plainScript(script) {
  return script.slice(script.indexOf("\n"));
}

/**
 * The script's first line: Upstash's key locking for every script, and
 * no-writes for those whose header says "-- flags: no-writes" (Redis then
 * refuses any write they try, and Upstash takes shared read locks).
 */
function shebangOf(name, body) {
  const marks = [...body.matchAll(/^-- flags: (\S+)/gm)].map((m) => m[1]);
  if (marks.length > 1 || (marks.length === 1 && marks[0] !== "no-writes")) {
    throw new Error(`gen-lua-scripts: ${name}: the only flags line a script may have is "-- flags: no-writes"`);
  }
  return marks.length === 1 ? "#!lua flags=no-writes,allow-key-locking" : "#!lua flags=allow-key-locking";
}

/**
 * The script as sent: lines that are only a comment are emptied. The .lua
 * files keep their comments for readers; the Worker's bundle (parsed at every
 * cold start) and each EVAL carry none. Lines stay where they were, so a Lua
 * error's line number still points into the script as generated. (No script
 * has a long string, so a line starting with "--" is always a comment.)
 */
function withoutCommentLines(script) {
  if (/\[=*\[/.test(script)) throw new Error("gen-lua-scripts: a script has a Lua long string or comment; teach withoutCommentLines about it");
  return script.replace(/^[ \t]*--.*$/gm, "");
}

/**
 * The prelude's blocks (separated by blank lines), each with the name of the
 * function it defines, if it defines one.
 */
function blocksOf(text) {
  return text
    .split(/\n\s*\n/)
    .filter((block) => block.trim() !== "")
    .map((block) => {
      const names = [...block.matchAll(/^local function (\w+)\(/gm)].map((m) => m[1]);
      // One function per block, whole: a blank line inside a function would cut it in two.
      if (names.length > 1 || (names.length === 1 && !/(^|\s)end\s*$/.test(block))) {
        throw new Error(
          `gen-lua-scripts: prelude.lua: a block must define at most one function, whole, with no blank line inside (${names.join(", ")})`,
        );
      }
      return { text: block, defines: names[0] };
    });
}

/**
 * The prelude a script needs: every block that defines no function (the
 * caller clock's only for a script that takes it: `clock`), and only the
 * functions the code (or a function it takes) calls. With `have` (the names
 * defined above a "-- prelude below:" mark): only the functions the code
 * calls that are not among them (a block that defines none stays on top,
 * where it takes the clock off ARGV before the script reads it).
 * Every local function is a closure made anew on each call of the script,
 * which Redis's Lua pays for whether it is used or not.
 */
function preludeFor(code, have = undefined, clock = false, blocks = preludeBlocks) {
  // Comment lines do not count: a comment naming a function must not make every script carry it.
  const calls = (text, fn) => new RegExp(`\\b${fn}\\b`).test(withoutCommentLines(text));
  const below = have !== undefined;
  const taken = new Set();
  let grew = true;
  while (grew) {
    grew = false;
    const reach = [code, ...blocks.filter((b) => taken.has(b.defines)).map((b) => b.text)].join("\n");
    for (const b of blocks) {
      if (b.defines && !taken.has(b.defines) && !have?.has(b.defines) && calls(reach, b.defines)) {
        taken.add(b.defines);
        grew = true;
      }
    }
  }
  const kept = blocks.filter((b) => (b.defines ? taken.has(b.defines) : !below && (clock || !/\bCALLER_CLOCK\b/.test(b.text))));
  return { text: `${kept.map((b) => b.text).join("\n\n")}\n`, taken: [...(have ?? []), ...taken] };
}

/**
 * A body with the line "-- prelude below: ..." (at its top level) in two: the
 * code above it, the usual path, which returns before the mark, and the rest.
 * The prelude functions only the rest calls are defined at the mark, so the
 * usual path does not make them.
 */
function splitAtPreludeMark(name, body) {
  const marks = [...body.matchAll(/^-- prelude below:.*$/gm)];
  if (marks.length > 1) throw new Error(`gen-lua-scripts: ${name} has more than one "-- prelude below:" line`);
  if (marks.length === 0) return [body, undefined];
  const at = marks[0].index + marks[0][0].length + 1;
  return [body.slice(0, at), body.slice(at)];
}

/**
 * The script's body after the prelude. A body whose header says "-- replies:
 * JSON text" returns JSON text on every path and runs as it is, at the
 * script's top level. Any other runs as a function whose reply, a list, is
 * encoded here: that function is a closure made on every call, with an
 * upvalue for each prelude function and constant it uses, which in Redis's
 * Lua costs about as much as a small command.
 */
function bodyOf(name, body) {
  if (/^-- replies: JSON text\b/m.test(body)) {
    if (/\breturn\s*\{/.test(body)) throw new Error(`gen-lua-scripts: ${name} says it replies JSON text but returns a table`);
    return body;
  }
  return `local function script_body()\n${body}\nend\n\nlocal reply = script_body()\nif type(reply) == 'string' then return reply end\nreturn cjson.encode(reply)\n`;
}

/**
 * The service's fixed timings, from src/limits.ts: NAME (a number) and
 * NAME_ARG (the same as text, the form a command takes), each written into
 * the script as a literal by withLimits. Literals rather than locals: a
 * local of the chunk that a function uses is an upvalue, made anew on every
 * call; and they are part of each script rather than arguments of every call
 * (fewer arguments to send, parse and check on the hot path).
 */
function limitsOf() {
  const names = ["FENCE_KEEP_MS", "MUTEX_KEEP_MS", "REQUEST_MEMORY_MS", "PICKUP_MS", "REGISTRATION_GRACE_MS", "ENDED_KEEP_MS"];
  const source = readFileSync(join(root, "src/limits.ts"), "utf8");
  return names.flatMap((name) => {
    const m = new RegExp(`^export const ${name} = ([0-9_ *]+);$`, "m").exec(source);
    if (!m) throw new Error(`gen-lua-scripts: src/limits.ts has no plain numeric ${name}`);
    const value = m[1].split("*").reduce((product, factor) => product * Number(factor.trim().replaceAll("_", "")), 1);
    if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`gen-lua-scripts: ${name} is not a positive integer`);
    return [
      [new RegExp(`\\b${name}_ARG\\b`, "g"), `'${value}'`],
      [new RegExp(`\\b${name}\\b`, "g"), String(value)],
    ];
  });
}

/** The script with each of src/limits.ts's names (limitsOf) replaced by its value. */
function withLimits(script) {
  return limits.reduce((text, [pattern, literal]) => text.replace(pattern, literal), script);
}
