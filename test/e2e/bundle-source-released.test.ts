// The launcher helper keeps no more of a bundle than V8 needs: once the bundle runs, its source read from disk and its code cache's bytes are garbage (the script keeps its own wrapped copy).
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import zlib from "node:zlib";
import { afterAll, expect, it } from "vitest";
import { cachePath } from "../../src/cli/run-bundle.js";

const RUN_BUNDLE = join(import.meta.dirname, "../../dist/run-bundle.cjs");
const SOURCE_BYTES = 8 * 2 ** 20;

const dir = mkdtempSync(join(tmpdir(), "delta-bundle-released-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A stamped bundle of about SOURCE_BYTES that reports, after a full collection, what V8 still holds in large objects and array buffers. */
function writeBundle(name: string): string {
  const body = [
    // A built-in named the way the bundle names them, long enough that a match of it is a slice of the source.
    'const { spawnSync } = require("node:child_process");',
    'const v8 = require("node:v8");',
    "module.exports = { spawnSync };",
    // As any bundle does soon after it starts: V8 keeps the subject of the last successful match (the helper's was the source) until the next one.
    '/y/.test("y");',
    "setImmediate(() => {",
    "  globalThis.gc();",
    '  const large = v8.getHeapSpaceStatistics().find((space) => space.space_name === "large_object_space").space_used_size;',
    "  process.stdout.write(JSON.stringify({ large, arrayBuffers: process.memoryUsage().arrayBuffers }));",
    "});",
    `//${"x".repeat(SOURCE_BYTES)}`,
  ].join("\n");
  const source = `//# delta-build=${"ab".repeat(32)}\n${body}\n`;
  const bundle = join(dir, name);
  writeFileSync(bundle, source);
  return bundle;
}

/** A cache file the helper reads (its CRC holds) whose V8 data V8 refuses: SOURCE_BYTES of zeros. */
function writeCache(bundle: string, source: string): void {
  const file = cachePath(bundle, source);
  if (file === null) throw new Error("the fixture bundle has no build stamp");
  mkdirSync(join(dir, ".cache"), { recursive: true });
  const body = Buffer.concat([Buffer.alloc(4), Buffer.alloc(SOURCE_BYTES)]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32LE(zlib.crc32(body));
  writeFileSync(file, Buffer.concat([crc, body]));
}

it("holds the bundle's source once (the script's copy) and none of its cache's bytes once the bundle runs", () => {
  const bundle = writeBundle("big.cjs");
  writeCache(bundle, `//# delta-build=${"ab".repeat(32)}\n`);
  const script = `require(${JSON.stringify(RUN_BUNDLE)}).runBundle(${JSON.stringify(bundle)}, { warmsCache: true, boundsYoungGeneration: true });`;
  // Under coverage the helper hands a bundle to Node's own loader; this is about its own.
  const { NODE_V8_COVERAGE: _coverage, ...env } = process.env;
  const held = JSON.parse(execFileSync(process.execPath, ["--expose-gc", "-e", script], { encoding: "utf8", env })) as {
    large: number;
    arrayBuffers: number;
  };
  // The script's wrapped source is the one copy: a second (the text read from disk, kept by a closure or by a slice of it) would double it.
  expect(held.large).toBeGreaterThanOrEqual(SOURCE_BYTES);
  expect(held.large).toBeLessThan(1.5 * SOURCE_BYTES);
  expect(held.arrayBuffers).toBeLessThan(SOURCE_BYTES / 2);
}, 60_000);
