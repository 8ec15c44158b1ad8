// Runs a shell script as root of a private mount namespace (`unshare -rm`), so a test can mount a tiny or read-only tmpfs.
import { execa } from "execa";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface NamespaceResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs `script` under `sh -c` in a new user and mount namespace; extra arguments are $1, $2… */
export async function inMountNamespace(script: string, args: string[] = [], env: Record<string, string> = {}): Promise<NamespaceResult> {
  const result = await execa("unshare", ["-rm", "sh", "-c", script, "sh", ...args], { env, extendEnv: true, reject: false, timeout: 30_000 });
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/** Why tmpfs mounts cannot be used here, or null when they can. */
export async function mountUnsupportedReason(): Promise<string | null> {
  const dir = mkdtempSync(join(tmpdir(), "delta-mount-probe-"));
  try {
    const probe = await inMountNamespace('mount -t tmpfs -o size=64k tmpfs "$1" && mount -o remount,ro "$1" && ! touch "$1/x" 2>/dev/null', [dir]).catch(
      (err: unknown) => ({ exitCode: -1, stdout: "", stderr: String(err) }),
    );
    return probe.exitCode === 0 ? null : `cannot mount a tmpfs in a private namespace (unshare -rm: ${probe.stderr.trim() || `exit ${probe.exitCode}`})`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
