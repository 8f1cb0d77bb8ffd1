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

/**
 * Relative links in the shipped Markdown files whose target is not in the tarball, as "file: target".
 * Fenced code is skipped (a sample's `[a](b)` is code, not a link).
 * @param {string} dir the unpacked tarball (its `package/` folder) @param {string[]} files the tarball's paths
 */
export function danglingLinks(dir, files) {
  const shipped = new Set(files);
  const dangling = [];
  for (const file of files.filter((f) => f.endsWith(".md"))) {
    const text = fs.readFileSync(path.join(dir, file), "utf8").replace(/^```[\s\S]*?^```/gm, "");
    for (const match of text.matchAll(LINK)) {
      const target = /** @type {string} */ (match[1] ?? match[2]);
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("#") || target.startsWith("//")) continue;
      const bare = decodeURI(target.split("#")[0] ?? "");
      const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(file), bare));
      if (!shipped.has(resolved)) dangling.push(`${file}: ${target}`);
    }
  }
  return dangling;
}
