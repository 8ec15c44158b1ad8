// Spawns a process with piped output and times it from spawn to exit.
import { spawn } from "node:child_process";
import { performance } from "node:perf_hooks";

/** Resolves with the wall time (ms), exit code and output once the process has exited; `inherited`: descriptors of this process the child gets from 3 on, as a calling shell's open files. */
export function spawnTimed(argv, env, inherited = []) {
  return new Promise((resolvePromise, reject) => {
    const startedAt = performance.now();
    const child = spawn(argv[0], argv.slice(1), { env, stdio: ["ignore", "pipe", "pipe", ...inherited] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolvePromise({ startedAt, wall: performance.now() - startedAt, exitCode: code, stdout, stderr }));
  });
}
