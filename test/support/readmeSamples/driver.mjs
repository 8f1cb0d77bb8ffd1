// Runs one README or docs/ sample as a user would, under whichever Node runs this file:
// node driver.mjs <sample id> <sample.mjs>. The sample's fixture (fixtures.mjs)
// first defines what the sample leaves to the reader (buildReport, queue, app...),
// then the sample runs as a module, then the fixture reports what it saw as one
// JSON line on stdout. No process.exit: a sample that leaves a lease heartbeating
// keeps its process alive, as it would keep the user's.
import { pathToFileURL } from "node:url";
import { fixtures } from "./fixtures.mjs";

const [id, file] = process.argv.slice(2);
const fixture = fixtures[id];
if (!fixture) throw new Error(`no fixture for README sample ${id}`);
const ctx = (await fixture.before?.()) ?? {};
const sample = await import(pathToFileURL(file).href);
const seen = (await fixture.after?.(ctx, sample)) ?? {};
const line = `${JSON.stringify({ node: process.version, ...ctx.seen, ...seen })}\n`;
// A sample that serves until stopped (a server) is stopped once its fixture has seen what it does.
if (fixture.stops) process.stdout.write(line, () => process.exit(0));
else process.stdout.write(line);
