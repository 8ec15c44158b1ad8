// Types of bundle.mjs, so TypeScript tests can build a bundle the way the build does.
export function bundleCli(entry: string, name: string, options?: { stamp?: boolean; root?: string; inject?: string[] }): Promise<void>;
