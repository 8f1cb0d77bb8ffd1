import type { ICruiseResult, IModule, IViolation } from "dependency-cruiser";

export const CONFIG_FILE: string;
export const KNOWN_VIOLATIONS_FILE: string;
export const KNOWN_PAIRS_FILE: string;
/** The cruise of `tree`/src (the repository by default) with the repository's rules; `knownViolations` are softened to "ignore". */
export function cruiseTree(tree?: string, options?: { knownViolations?: IViolation[] }): Promise<ICruiseResult>;
/** The unit a file of src/ belongs to: src/<folder>, or a top-level file itself. */
export function unitOf(file: string): string;
/** Every two units of src/ that import each other: "a <-> b" (a before b), with the imports both ways. */
export function folderPairs(modules: IModule[]): Array<{ pair: string; edges: string[] }>;
/** The pairs found against a list: those not on it, and listed ones no longer found. */
export function comparePairs(
  found: Array<{ pair: string; edges: string[] }>,
  known: string[],
): { fresh: Array<{ pair: string; edges: string[] }>; gone: string[] };
