// The folders of the engine's own code: its package and the packages its bundles load from node_modules at run time.
//
// A later `delta` (a continue, a hook's run) runs what these folders hold, unboxed: a box may never write them,
// wherever they lie (a project's node_modules/delta-engine inside the workspace, the engine's clone above it).
import { existsSync, readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import { packageRootHolding } from "../../package-root.js";

/**
 * The packages the bundles in dist/ require by name rather than carry inside them (scripts/bundle.mjs leaves the
 * tokenizer's tables out; ajv's standalone code requires its runtime). test/process/sandbox/engine-code.test.ts reads dist/ and
 * fails when a bundle requires a package this list does not lead to.
 */
const RUNTIME_PACKAGES = ["gpt-tokenizer", "ajv", "ajv-formats"] as const;

let enginePackageDir: string | undefined;

/** The engine's package: the folder holding package.json and the forwarder the build writes beside the bundle (dist/sandbox-forwarder.cjs). */
export function enginePackage(): string {
  if (enginePackageDir !== undefined) return enginePackageDir;
  enginePackageDir = packageRootHolding(path.join("dist", "sandbox-forwarder.cjs"));
  if (enginePackageDir === undefined) throw new Error("dist/sandbox-forwarder.cjs is missing from the delta-engine package; rebuild it (npm run build) or reinstall");
  return enginePackageDir;
}

let codeFolders: readonly string[] | undefined;

/** The engine's package and the folders of RUNTIME_PACKAGES and their dependencies, found as Node finds them, links resolved. */
export function engineCodeFolders(): readonly string[] {
  if (codeFolders !== undefined) return codeFolders;
  const engine = realpathSync(enginePackage());
  const found = new Set<string>([engine]);
  const queue: { name: string; from: string }[] = RUNTIME_PACKAGES.map((name) => ({ name, from: engine }));
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    const folder = packageFolder(next.name, next.from);
    if (folder === undefined || found.has(folder)) continue;
    found.add(folder);
    for (const name of dependenciesOf(folder)) queue.push({ name, from: folder });
  }
  return (codeFolders = [...found]);
}

/** node_modules/<name> in `from` or the nearest folder above it that has one, as require() looks. */
function packageFolder(name: string, from: string): string | undefined {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "node_modules", name);
    if (existsSync(path.join(candidate, "package.json"))) return realpathSync(candidate);
    if (path.dirname(dir) === dir) return undefined;
  }
}

function dependenciesOf(folder: string): string[] {
  try {
    const manifest = JSON.parse(readFileSync(path.join(folder, "package.json"), "utf8")) as { dependencies?: Record<string, string> };
    return Object.keys(manifest.dependencies ?? {});
  } catch {
    return [];
  }
}
