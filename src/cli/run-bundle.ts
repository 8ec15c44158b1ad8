// Runs a bundled CLI (dist/*.cjs) through a V8 code cache kept in dist/.cache, so a start-up skips compiling the bundle.
//
// Node 20 has no module compile cache (`module.enableCompileCache` is Node 22), and compiling the
// ~1 MB bundle is a third of a short run's start-up. V8 can serialize the bytecode of every
// function a script has compiled (`createCachedData` after it ran) and accept it back for the
// same source, V8 version and flags; it rejects anything else, and the script then compiles as
// usual. The cache is keyed by the bundle's content hash, which the build writes on its first line,
// and carries a CRC-32 against damage that V8 itself would not notice.
//
// A cache holds only the functions its maker ran. Made by a run whose model called no tool, it left
// out the whole tool path, and every later run compiled that from source again. So each cache says
// which code paths it covers (the journal event types its maker appended, as the run reports them),
// and a process that ran one it lacks writes it again at exit, covering both: the functions V8
// accepted from the cache are in what it writes, unless V8's collector dropped the bytecode of those
// left unused for a while: a `continue` of a 100 MB journal, whose read runs the collector often,
// made 0.88 MB of a 1.34 MB cache. A cache is not written smaller than it was (coversToWrite).
import { accessSync, constants, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire, isBuiltin } from "node:module";
import path from "node:path";
import { Script } from "node:vm";
import zlib from "node:zlib";
import { boundOldGeneration } from "./old-generation.js";
import { boundYoungGeneration, withDefaultFlags } from "./runtime-flags.js";

// The bundle's loop holds V8's loop flags (the optimizing compiler, the scavenger's helper thread) through this helper (launcher-helper.ts), which keeps V8's flags consistent around its compiles, and reports the code paths it ran (ranCodePath).
export { holdLoopFlags } from "./runtime-flags.js";

/** The build stamps every bundle's first line with this prefix and the hex SHA-256 of the rest of the file. */
export const BUILD_STAMP_PREFIX = "//# delta-build=";
const STAMP_LENGTH = 64;

interface RunBundleOptions {
  /** Whether this invocation should (re)write the cache when there is none or V8 rejected it. */
  warmsCache: boolean;
  /** Whether to hold V8's young generation at its first size once the bundle is loaded (the long-lived commands: run, continue). */
  boundsYoungGeneration?: boolean;
}

/** Loads and runs the CommonJS bundle at `bundlePath` as the main program. */
export function runBundle(bundlePath: string, options: RunBundleOptions): void {
  const source = readFileSync(bundlePath, "utf8");
  if (options.boundsYoungGeneration === true) {
    // Node's own modules load under V8's default flags (builtinsUnderDefaultFlags), and a scavenge
    // that lands while one loads may double the young generation. Loaded here, before the hold,
    // none is left to load in the middle of a run, when the heap is full of survivors.
    preloadBuiltins(bundlePath, source);
    // Before the bundle runs: loading it is what grows the young generation most.
    boundYoungGeneration();
    boundOldGeneration();
  }
  evaluate(bundlePath, source, options.warmsCache);
}

/** Built-in modules already loaded through this helper: Node returns them from its cache, with nothing left to compile. */
const loadedBuiltins = new Set<string>();

/** Loads every built-in module the bundle names (`require("node:fs")`, `require("events")`): about 0.4 ms to find them in a 1 MB bundle. */
function preloadBuiltins(bundlePath: string, source: string): void {
  const load = createRequire(bundlePath);
  const names = new Set<string>();
  for (const [, name] of source.matchAll(/\brequire\("((?:node:)?[a-z_/]+)"\)/g)) if (name !== undefined) names.add(name);
  for (const name of names) {
    if (!isBuiltin(name)) continue;
    load(name);
    // A copy: the match is a slice of the bundle's source, and kept for the whole run it would keep all of it (~0.9 MB).
    loadedBuiltins.add(Buffer.from(name, "latin1").toString("latin1"));
  }
}

/**
 * Loads another bundle of the build (one that only some runs need, such as the MCP client) as a
 * module, through the same code cache, and returns its exports. Only the runs that need it load it,
 * so each of them keeps its cache warm.
 */
export function requireBundle(bundlePath: string): unknown {
  return evaluate(bundlePath, readFileSync(bundlePath, "utf8"), true).exports;
}

function evaluate(bundlePath: string, source: string, warmsCache: boolean): { exports: unknown } {
  // A process measured for coverage loads the bundle through Node's own loader: V8 reports block coverage only for code
  // compiled from source, and against the file as written, not as wrapped here (npm run coverage maps it through dist/*.map).
  if (process.env.NODE_V8_COVERAGE !== undefined) return { exports: createRequire(bundlePath)(bundlePath) };
  const cacheFile = cachePath(bundlePath, source);
  const { script, accepted } = compile(bundlePath, source, cacheFile);
  if (cacheFile !== null && warmsCache) rewriteCacheAtExit(script, cacheFile, accepted);
  const module = { exports: {} };
  const run = script.runInThisContext() as (exports: object, require: NodeJS.Require, module: object, filename: string, dirname: string) => void;
  run.call(module.exports, module.exports, builtinsUnderDefaultFlags(createRequire(bundlePath)), module, bundlePath, path.dirname(bundlePath));
  return module;
}

/**
 * The bundle's script, from the cache when V8 accepts it, and what the accepted cache covers. Its own function: the closure
 * that compiles sees the source and the cache's data, and V8 keeps a function's captured variables in one context shared
 * by every closure made there, so an exit handler made beside it would hold both (~2.2 MB) for the whole run.
 */
function compile(bundlePath: string, source: string, cacheFile: string | null): { script: Script; accepted: AcceptedCache | null } {
  const cached = cacheFile === null ? undefined : readCache(cacheFile);
  const script = withDefaultFlags(() => new Script(wrapCommonJs(source), { filename: bundlePath, cachedData: cached?.data }));
  const accepted = cached === undefined || script.cachedDataRejected === true ? null : { covers: cached.covers, bytes: cached.data.length };
  return { script, accepted };
}

/** At exit the script has compiled every function this command used; those are what the next start needs. */
function rewriteCacheAtExit(script: Script, cacheFile: string, accepted: AcceptedCache | null): void {
  process.once("exit", () => {
    if (accepted !== null && [...ranCode].every((name) => accepted.covers.includes(name))) return;
    // A read-only install runs without a cache: V8's data (~1.3 MB) is not made at every exit for nothing.
    if (!cacheFolderWritable(cacheFile)) return;
    const data = cacheData(script);
    const covers = data === null ? null : coversToWrite(accepted, ranCode, data.length);
    if (data !== null && covers !== null) writeCache(cacheFile, data, covers);
  });
}

/**
 * A require that loads Node's own modules under V8's default flags, so they compile from Node's code cache (runtime-flags.ts).
 * One already loaded comes from Node's cache as it is: each change of flags costs V8 ~0.13 M instructions (it enforces
 * every flag's implications again), and the bundle names its built-ins once per module as it loads and again at each
 * `import()` of one (an HTTP request imports node:http).
 */
function builtinsUnderDefaultFlags(plain: NodeJS.Require): NodeJS.Require {
  const load = (id: string): unknown => {
    if (!isBuiltin(id) || loadedBuiltins.has(id)) return plain(id);
    const loaded = withDefaultFlags(() => plain(id));
    loadedBuiltins.add(id);
    return loaded;
  };
  return Object.assign(load, plain);
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

/** The code paths this process ran, as its run reported them. */
const ranCode = new Set<string>();

/** The run reports each code path it ran (a journal event type it appended); a cache that lacks one is written again at exit. */
export function ranCodePath(name: string): void {
  ranCode.add(name);
}

/** A cache V8 accepted: the code paths it lists, and the size of its V8 data. */
interface AcceptedCache {
  covers: readonly string[];
  bytes: number;
}

/**
 * The code paths the cache written at exit lists (this process's, with those of the cache V8 accepted), or null to leave
 * the cache as it is: when V8's data of this process (`bytes`) is smaller than the accepted cache's, the collector
 * dropped functions the cache held, and writing it would lose them.
 */
export function coversToWrite(accepted: AcceptedCache | null, ran: ReadonlySet<string>, bytes: number): string[] | null {
  if (accepted === null) return [...ran].sort();
  if (bytes < accepted.bytes) return null;
  return [...new Set([...accepted.covers, ...ran])].sort();
}

/** Whether the cache's folder is there (or could be made) and this process may write in it. */
function cacheFolderWritable(file: string): boolean {
  const folder = path.dirname(file);
  try {
    mkdirSync(folder, { recursive: true });
    accessSync(folder, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** The V8 data of every function `script` has compiled, made under V8's default flags; null when V8 cannot make it. */
function cacheData(script: Script): Buffer | null {
  try {
    return withDefaultFlags(() => script.createCachedData());
  } catch {
    return null;
  }
}

/**
 * A cache file is a CRC-32 of all that follows; the length of the list of code paths it covers
 * (4 bytes) and the list (names one a line); then the V8 data. Release builds of V8 do not checksum a
 * code cache, and a damaged one aborts the process in the deserializer at every start until it
 * is replaced; here damage counts as no cache. (V8's own --verify-snapshot-checksum, set at run
 * time, changes V8's flag hash and so makes Node recompile its built-in modules: far dearer.)
 */
function readCache(file: string): { data: Buffer; covers: string[] } | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return undefined;
  }
  if (bytes.length <= HEADER_BYTES || typeof zlib.crc32 !== "function") return undefined;
  if (zlib.crc32(bytes.subarray(CRC_BYTES)) !== bytes.readUInt32LE(0)) return undefined;
  const coversEnd = HEADER_BYTES + bytes.readUInt32LE(CRC_BYTES);
  if (coversEnd >= bytes.length) return undefined;
  const covers = bytes.subarray(HEADER_BYTES, coversEnd).toString("utf8");
  return { data: bytes.subarray(coversEnd), covers: covers === "" ? [] : covers.split("\n") };
}

const CRC_BYTES = 4;
const HEADER_BYTES = CRC_BYTES + 4;

/**
 * Best effort and atomic: a temporary file renamed over the cache, so a reader never sees half of
 * one. A read-only install simply runs without a cache.
 */
function writeCache(file: string, data: Buffer, covers: readonly string[]): void {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    const list = Buffer.from(covers.join("\n"));
    const header = Buffer.alloc(HEADER_BYTES);
    header.writeUInt32LE(list.length, CRC_BYTES);
    const body = Buffer.concat([header.subarray(CRC_BYTES), list, data]);
    header.writeUInt32LE(zlib.crc32(body), 0);
    writeFileSync(temporary, Buffer.concat([header.subarray(0, CRC_BYTES), body]));
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
