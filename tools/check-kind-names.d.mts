export function kindNamesIn(rootDir: string): string[];
export function kindNameLiterals(files: Array<[string, string]>, names: string[]): string[];
export function check(rootDir?: string): string[];
