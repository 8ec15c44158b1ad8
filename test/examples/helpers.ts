// What the example tests share: `delta` and `delta-sessions` on PATH, running an example's shell script, reading prompts.
import { execa } from "execa";
import { mkdirSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { NO_MODEL_KEYS, REPO } from "../e2e/harness.js";

export const EXAMPLES = join(REPO, "examples");

/** A directory under `root` holding `delta` and `delta-sessions` links to this checkout's launchers, as `npm link` would. */
export function binDir(root: string): string {
  const dir = join(root, "bin");
  mkdirSync(dir, { recursive: true });
  symlinkSync(join(REPO, "bin/delta.js"), join(dir, "delta"));
  symlinkSync(join(REPO, "bin/delta-sessions.js"), join(dir, "delta-sessions"));
  return dir;
}

/** PATH with the linked launchers and this node first. */
export function pathWith(bin: string): string {
  return [bin, dirname(process.execPath), process.env.PATH ?? ""].join(":");
}

export interface ScriptResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs an example's bash script the way a user would, with no model key inherited from this machine. */
export async function runScript(script: string, args: string[], options: { cwd: string; env: Record<string, string>; timeoutMs?: number }): Promise<ScriptResult> {
  const result = await execa("bash", [script, ...args], {
    cwd: options.cwd,
    env: { ...NO_MODEL_KEYS, ...options.env },
    extendEnv: true,
    stdin: "ignore",
    reject: false,
    stripFinalNewline: false,
    timeout: options.timeoutMs ?? 110_000,
  });
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}
