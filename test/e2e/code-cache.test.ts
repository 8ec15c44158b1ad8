// The launcher's V8 code cache: written by the first run, accepted by the next, and never a reason for a run to fail.
import { execa } from "execa";
import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { BUILD_STAMP_PREFIX, cachePath } from "../../src/cli/run-bundle.js";
import { EXAMPLES } from "../examples/helpers.js";
import { reply, startMockLlm, type Step } from "../support/mock-llm.js";
import { CRASH_TRACE, NO_MODEL_KEYS, REPO, copyOfDelta, modelEnv, setUpE2e, writeAgent } from "./harness.js";

const { root } = setUpE2e("delta-code-cache-");
/** A copy of the built package (bin/, dist/, package.json), so this file's cache never meets the other tests' runs. */
const install = join(root, "install");
const cacheDir = join(install, "dist", ".cache");
const HELLO = join(EXAMPLES, "hello-world");

beforeEach(() => {
  rmSync(install, { recursive: true, force: true });
  copyOfDelta(install);
});

let runs = 0;
async function replayHello(args: string[] = [], env: Record<string, string> = {}): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  runs += 1;
  const workDir = join(root, `ws-${runs}`);
  const result = await execa(
    process.execPath,
    [join(install, "bin/delta.js"), "run", "--agent", HELLO, "-w", workDir, "--replay", join(HELLO, "recording.jsonl"), "-m", "Write a greeting to hello.txt and show it", "--format", "json", ...args],
    { env: { ...NO_MODEL_KEYS, ...env }, reject: false, timeout: 30_000 },
  );
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

function flipMiddleByte(bytes: Buffer): Buffer {
  const copy = Buffer.from(bytes);
  const middle = Math.floor(copy.length / 2);
  copy[middle] = copy[middle]! ^ 0xff;
  return copy;
}

/** The cache files of `bundle` (dist/<bundle>.cjs): the delta bundle's unless told. */
function cacheFiles(bundle = "delta"): string[] {
  const ofBundle = new RegExp(`^${bundle}-[0-9a-f]{16}-`);
  return existsSync(cacheDir) ? readdirSync(cacheDir).filter((name) => ofBundle.test(name)).sort() : [];
}

describe("code cache", () => {
  it("the first run writes one cache file for each bundle it loaded and this Node; the next run accepts them as they are", async () => {
    expect(readdirSync(join(install, "dist")).includes(".cache")).toBe(false);
    const first = await replayHello();
    expect(first.exitCode).toBe(0);
    expect(JSON.parse(first.stdout).status).toBe("COMPLETED");

    // Every run loads the delta bundle and, at its first append, the journal's checks (dist/delta-journal-checks.cjs).
    const ofThisNode = `-[0-9a-f]{16}-${process.version.replace(/\./g, "\\.")}-${process.arch}\\.v8$`;
    expect(readdirSync(cacheDir).sort()).toEqual([expect.stringMatching(new RegExp(`^delta${ofThisNode}`)), expect.stringMatching(new RegExp(`^delta-journal-checks${ofThisNode}`))]);
    const files = readdirSync(cacheDir).map((name) => join(cacheDir, name));
    const written = files.map((file) => statSync(file));
    expect(written[0]!.size).toBeGreaterThan(100_000);

    const second = await replayHello();
    expect(second.exitCode).toBe(0);
    // V8 accepted both caches, so the launcher left them alone: the same files, not rewritten ones.
    expect(files.map((file) => statSync(file)).map(({ ino, mtimeMs }) => [ino, mtimeMs])).toEqual(written.map(({ ino, mtimeMs }) => [ino, mtimeMs]));
    expect(readdirSync(cacheDir)).toHaveLength(2);
  });

  it("commands other than run and continue never write the cache, whether there is one or not", async () => {
    const version = () => execa(process.execPath, [join(install, "bin/delta.js"), "--version"], { reject: false });
    expect((await version()).exitCode).toBe(0);
    expect(cacheFiles()).toEqual([]);

    await replayHello();
    const [name] = cacheFiles();
    const before = statSync(join(cacheDir, name!));
    expect((await version()).exitCode).toBe(0);
    const after = statSync(join(cacheDir, name!));
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
  });

  it("a cache file of garbage is rejected: the run completes and the cache is replaced", async () => {
    await replayHello();
    const [name] = cacheFiles();
    const garbage = Buffer.alloc(4096, 0x5a);
    writeFileSync(join(cacheDir, name!), garbage);

    const result = await replayHello();
    expect(result.exitCode).toBe(0);
    expect(result.stderr).not.toMatch(CRASH_TRACE);
    const replaced = readFileSync(join(cacheDir, name!));
    expect(replaced.equals(garbage)).toBe(false);
    expect(replaced.length).toBeGreaterThan(100_000);
  });

  it("a cache damaged inside (one byte flipped, or cut short) is rejected by its CRC-32, never a crash of V8", async () => {
    await replayHello();
    const [name] = cacheFiles();
    const file = join(cacheDir, name!);
    const intact = readFileSync(file);
    for (const damaged of [flipMiddleByte(intact), intact.subarray(0, Math.floor(intact.length / 2))]) {
      writeFileSync(file, damaged);
      const result = await replayHello();
      expect(result.exitCode).toBe(0);
      expect(result.stderr).not.toMatch(/Fatal error/);
      expect(result.stderr).not.toMatch(CRASH_TRACE);
      expect(JSON.parse(result.stdout).status).toBe("COMPLETED");
      expect(readFileSync(file).equals(damaged)).toBe(false);
    }
  });

  it("a rebuilt bundle (another stamp) gets its own cache instead of meeting the old one", async () => {
    await replayHello();
    const bundle = join(install, "dist", "delta.cjs");
    const source = readFileSync(bundle, "utf8");
    const otherStamp = `${BUILD_STAMP_PREFIX}${"f".repeat(64)}`;
    writeFileSync(bundle, otherStamp + source.slice(otherStamp.length));

    expect((await replayHello()).exitCode).toBe(0);
    expect(cacheFiles()).toHaveLength(2);
    expect(cacheFiles()).toContain(`delta-${"f".repeat(16)}-${process.version}-${process.arch}.v8`);
  });

  it("an unwritable cache location costs only the cache: the run completes, nothing is left behind, no cache data is made for nothing", async () => {
    writeFileSync(cacheDir, "not a directory");
    // A read-only install starts every run without a cache: making V8's data at each exit (~1.3 MB) would be wasted.
    const made = join(root, "cache-data-made.txt");
    rmSync(made, { force: true });
    const preload = join(import.meta.dirname, "../support/count-cache-data.cjs");
    const result = await replayHello([], { NODE_OPTIONS: `--require ${preload}`, DELTA_TEST_CACHE_DATA_OUT: made });
    expect(result.exitCode).toBe(0);
    expect(result.stderr).not.toMatch(CRASH_TRACE);
    expect(readFileSync(cacheDir, "utf8")).toBe("not a directory");
    expect(readdirSync(join(install, "dist")).filter((name) => name.endsWith(".tmp"))).toEqual([]);
    expect(existsSync(made)).toBe(false);
  });
});

/** A run of the copy against a scripted model; the agent has an `echo` tool. */
async function scriptedRun(steps: Step[]): Promise<number> {
  const server = await startMockLlm(steps);
  try {
    runs += 1;
    const agent = writeAgent(root, {}, `agent-${runs}`);
    const result = await execa(process.execPath, [join(install, "bin/delta.js"), "run", "--agent", agent, "-w", join(root, `ws-${runs}`), "-m", "go"], {
      env: { ...NO_MODEL_KEYS, ...modelEnv(server.baseUrl) },
      reject: false,
      timeout: 30_000,
    });
    return result.exitCode ?? -1;
  } finally {
    await server.close();
  }
}

/** The code paths (journal event types) the one cache file says it covers, and the file's identity. */
function cacheCovers(): { covers: string[]; ino: number; mtimeMs: number; size: number } {
  const [name] = cacheFiles();
  const file = join(cacheDir, name!);
  const bytes = readFileSync(file);
  const list = bytes.subarray(8, 8 + bytes.readUInt32LE(4)).toString("utf8");
  const { ino, mtimeMs, size } = statSync(file);
  return { covers: list === "" ? [] : list.split("\n"), ino, mtimeMs, size };
}

describe("what a cache covers", () => {
  const toolThenAnswer = (): Step[] => [reply.toolCalls([{ name: "echo", arguments: { text: "hi" } }]), reply.text("done")];

  it("a cache made by a run whose model called no tool is made again, once, by the first run that ran one; then left alone", async () => {
    expect(await scriptedRun([reply.text("done")])).toBe(0);
    const answerOnly = cacheCovers();
    expect(answerOnly.covers).not.toContain("ACTION_RESULT");

    expect(await scriptedRun(toolThenAnswer())).toBe(0);
    const withTools = cacheCovers();
    expect(withTools.covers).toEqual(expect.arrayContaining(["ACTION_REQUEST", "ACTION_RESULT", "THOUGHT"]));
    expect(withTools.ino).not.toBe(answerOnly.ino);
    // It holds the tool path's functions now, besides all the first one held.
    expect(withTools.size).toBeGreaterThan(answerOnly.size);

    // Neither another run with tools nor one without has anything to add.
    for (const steps of [toolThenAnswer(), [reply.text("done")]]) {
      expect(await scriptedRun(steps)).toBe(0);
      expect(cacheCovers()).toEqual(withTools);
    }
    expect(cacheFiles()).toHaveLength(1);
  });
});

describe("cachePath", () => {
  it("keys the cache by the bundle's stamp, Node version and architecture; an unstamped bundle has no cache", () => {
    const stamp = "0123456789abcdef".repeat(4);
    expect(cachePath("/pkg/dist/delta.cjs", `${BUILD_STAMP_PREFIX}${stamp}\ncode`)).toBe(
      `/pkg/dist/.cache/delta-0123456789abcdef-${process.version}-${process.arch}.v8`,
    );
    expect(cachePath("/pkg/dist/delta.cjs", "code without a stamp")).toBeNull();
    expect(cachePath("/pkg/dist/delta.cjs", `${BUILD_STAMP_PREFIX}${"z".repeat(64)}\ncode`)).toBeNull();
  });
});

describe("the bundles", () => {
  // V8 keeps a script's source as one string: a single character beyond Latin-1 anywhere (esbuild
  // cannot escape the raw text of a tagged template) makes all of it two bytes a character, which
  // measured 3.7 MB more peak memory for a 30-turn run.
  it.each(["delta.cjs", "delta-sessions.cjs"])("dist/%s is Latin-1 text, so V8 holds it one byte a character", (name) => {
    const source = readFileSync(join(REPO, "dist", name), "utf8");
    const wide = [...source].filter((char) => char.codePointAt(0)! > 0xff);
    expect(wide.map((char) => `U+${char.codePointAt(0)!.toString(16).padStart(4, "0")}`)).toEqual([]);
  });
});
