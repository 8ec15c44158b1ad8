// Runs a bundled CLI (dist/*.cjs) through a V8 code cache kept in dist/.cache, so a start-up skips compiling the bundle.
//
// Node 20 has no module compile cache (`module.enableCompileCache` is Node 22), and compiling the
// ~1 MB bundle is a third of a short run's start-up. V8 can serialize the bytecode of every
// function a script has compiled (`createCachedData` after it ran) and accept it back for the
// same source, V8 version and flags; it rejects anything else, and the script then compiles as
// usual. The cache is keyed by the bundle's content hash, which the build writes on its first line.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { setFlagsFromString } from "node:v8";
import { Script } from "node:vm";

/** The build stamps every bundle's first line with this prefix and the hex SHA-256 of the rest of the file. */
export const BUILD_STAMP_PREFIX = "//# delta-build=";
const STAMP_LENGTH = 64;

export interface RunBundleOptions {
  /** Whether this invocation should (re)write the cache when there is none or V8 rejected it. */
  warmsCache: boolean;
}

/** Loads and runs the CommonJS bundle at `bundlePath` as the main program. */
export function runBundle(bundlePath: string, options: RunBundleOptions): void {
  const source = readFileSync(bundlePath, "utf8");
  const cacheFile = cachePath(bundlePath, source);
  const cached = cacheFile === null ? undefined : readCache(cacheFile);
  // Release builds of V8 skip the cache's checksum, and a damaged cache then aborts the process in
  // the deserializer, at every start until it is replaced. With the check, damage is a rejection.
  setFlagsFromString("--verify-snapshot-checksum");
  const script = new Script(wrapCommonJs(source), { filename: bundlePath, cachedData: cached });
  if (cacheFile !== null && options.warmsCache && (cached === undefined || script.cachedDataRejected === true)) {
    // At exit the script has compiled every function this command used; those are what the next start needs.
    process.once("exit", () => writeCache(cacheFile, script));
  }
  const module = { exports: {} };
  const run = script.runInThisContext() as (exports: object, require: NodeJS.Require, module: object, filename: string, dirname: string) => void;
  run.call(module.exports, module.exports, createRequire(bundlePath), module, bundlePath, path.dirname(bundlePath));
}

/** Same line structure as the bundle (the wrapper opens on its first line), so stack traces keep their line numbers. */
function wrapCommonJs(source: string): string {
  return `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
}

/** `dist/.cache/<bundle>-<content hash>-<node version>-<arch>.v8`, or null for a bundle without a build stamp. */
export function cachePath(bundlePath: string, source: string): string | null {
  if (!source.startsWith(BUILD_STAMP_PREFIX)) return null;
  const stamp = source.slice(BUILD_STAMP_PREFIX.length, BUILD_STAMP_PREFIX.length + STAMP_LENGTH);
  if (!/^[0-9a-f]{64}$/.test(stamp)) return null;
  const name = `${path.basename(bundlePath, ".cjs")}-${stamp.slice(0, 16)}-${process.version}-${process.arch}.v8`;
  return path.join(path.dirname(bundlePath), ".cache", name);
}

function readCache(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/**
 * Best effort and atomic: a temporary file renamed over the cache, so a reader never sees half of
 * one. A read-only install simply runs without a cache.
 */
function writeCache(file: string, script: Script): void {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(temporary, script.createCachedData());
    renameSync(temporary, file);
  } catch {
    // No cache this time; the next start compiles the bundle as usual.
    try {
      rmSync(temporary, { force: true });
    } catch {
      // Nothing more to do at exit.
    }
  }
}
