// Bundles a few lines of TypeScript that import engine modules into one CommonJS file, for a test to run as a process of its own.
import { build } from "esbuild";
import { resolve } from "node:path";

/** `contents` may import src/ modules by absolute path; returns `outfile`. */
export async function bundleScript(outfile: string, contents: string): Promise<string> {
  await build({
    stdin: { contents, resolveDir: resolve("."), loader: "ts" },
    bundle: true,
    platform: "node",
    format: "cjs",
    outfile,
    logLevel: "silent",
  });
  return outfile;
}
