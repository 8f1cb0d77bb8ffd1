// What `npm run check:package` reads in the packed tarball before installing it:
// relative links in the shipped Markdown that lead nowhere (the registry shows the
// README apart from the repository, and node_modules has only what was packed), and
// scripts npm would run on a consumer's install.
import fs from "node:fs";
import path from "node:path";

/** Lifecycle scripts npm runs when the package is installed as a dependency (or from a tarball). */
export const INSTALL_SCRIPTS = ["preinstall", "install", "postinstall", "prepare"];

/** The install scripts a package.json declares, as "name: command". @param {{ scripts?: Record<string, string> }} pkg */
export function installScripts(pkg) {
  return INSTALL_SCRIPTS.filter((name) => pkg.scripts?.[name] !== undefined).map((name) => `${name}: ${pkg.scripts?.[name]}`);
}

/** Markdown links and images `[text](target)`, and HTML src/href attributes. */
const LINK = /!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)|\b(?:src|href)="([^"]+)"/g;

/** A heading's anchor as GitHub and the registry make it: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors of a Markdown text: its headings' (a repeated heading's get -1, -2...) and explicit ones. @param {string} text */
function anchors(text) {
  const found = new Set();
  for (const [, heading] of text.matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const base = slug(/** @type {string} */ (heading));
    let anchor = base;
    for (let n = 1; found.has(anchor); n++) anchor = `${base}-${n}`;
    found.add(anchor);
  }
  // An explicit anchor (`<a id="x"></a>` or name=), which GitHub and the registry keep, for a point inside a section.
  for (const [, , id] of text.matchAll(/<a\s+(id|name)="([^"]+)"/g)) found.add(id);
  return found;
}

/**
 * Relative links in the shipped Markdown files whose target is not in the tarball, or whose
 * `#anchor` names no heading there, as "file: target".
 * Fenced code is skipped (a sample's `[a](b)` is code, not a link).
 * @param {string} dir the unpacked tarball (its `package/` folder) @param {string[]} files the tarball's paths
 */
export function danglingLinks(dir, files) {
  const shipped = new Set(files);
  const markdown = new Map(
    files.filter((f) => f.endsWith(".md")).map((f) => [f, fs.readFileSync(path.join(dir, f), "utf8").replace(/^```[\s\S]*?^```/gm, "")]),
  );
  const dangling = [];
  for (const [file, text] of markdown) {
    for (const match of text.matchAll(LINK)) {
      const target = /** @type {string} */ (match[1] ?? match[2]);
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) continue;
      const [bare = "", anchor] = decodeURI(target).split("#");
      const resolved = bare ? path.posix.normalize(path.posix.join(path.posix.dirname(file), bare)) : file;
      const targetText = markdown.get(resolved);
      if (!shipped.has(resolved)) dangling.push(`${file}: ${target}`);
      else if (anchor && targetText !== undefined && !anchors(targetText).has(anchor)) dangling.push(`${file}: ${target} (no such heading)`);
    }
  }
  return dangling;
}
