/** The layers of src/, bottom to top (tools/check-layers.mjs). */
export const LAYERS: Array<{ layer: string; paths: string[] }>;
/** The runtime imports of a file, as repository paths (type-only imports left out). */
export function runtimeImports(file: string, text: string): string[];
/** Every import that breaks a layer rule, as "from -> to (rule)", given [path, text] of every file. */
export function violations(files: Array<[string, string]>): string[];
