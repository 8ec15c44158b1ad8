// Test harness: builds the delta-sessions bundle when its sources changed, and runs the real binary.
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { bundleCli } from "../../scripts/bundle.mjs";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const launcher = path.join(repoRoot, "bin/delta-sessions.js");
const bundle = path.join(repoRoot, "dist/delta-sessions.cjs");

async function newestSourceMtime(): Promise<number> {
  const dir = path.join(repoRoot, "src/sessions");
  const files = [...(await readdir(dir)).map((name) => path.join(dir, name)), path.join(repoRoot, "src/errors.ts")];
  const times = await Promise.all(files.map(async (file) => (await stat(file)).mtimeMs));
  return Math.max(...times);
}

/** Rebuilds dist/delta-sessions.cjs (as scripts/build.mjs does, without the other CLI) when it is older than its sources. */
export async function ensureBuilt(): Promise<void> {
  const built = await stat(bundle).then((s) => s.mtimeMs, () => 0);
  if (built >= (await newestSourceMtime())) return;
  await bundleCli("src/sessions/main.ts", "delta-sessions", { root: repoRoot });
}

export interface CliRun {
  stdout: string;
  stderr: string;
  exitCode: number | undefined;
}

export interface CliOptions {
  cwd: string;
  input?: string;
  env?: Record<string, string>;
  /** Start bin/delta-sessions.js as an executable, the way the `delta-sessions` command starts, instead of through node. */
  asCommand?: boolean;
}

export async function sessions(args: string[], options: CliOptions): Promise<CliRun> {
  const result = await execa(options.asCommand ? launcher : "node", options.asCommand ? args : [launcher, ...args], {
    cwd: options.cwd,
    input: options.input ?? "",
    env: options.env ?? {},
    reject: false,
  });
  return { stdout: result.stdout, stderr: result.stderr, exitCode: result.exitCode };
}

/** Runs a command that must succeed and print one JSON value. */
export async function sessionsJson(args: string[], options: CliOptions): Promise<unknown> {
  const run = await sessions(args, options);
  if (run.exitCode !== 0) throw new Error(`delta-sessions ${args.join(" ")} exited ${run.exitCode}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

export async function makeTempDir(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), "delta-sessions-test-"));
}

export async function removeTempDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}
