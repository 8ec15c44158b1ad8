// Starts a long-lived child (an MCP server, say) in its own process group, with piped stdio, and stops that group later.
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { KILL_GRACE_MS, processGroup, spawnGroupLeader } from "./group.js";
import type { SandboxBox } from "./sandbox/argv.js";
import { spawnFailure, type SpawnFailure } from "./spawn-failure.js";

export interface StartRequest {
  argv: readonly string[];
  cwd: string;
  /** The process's whole environment: nothing is inherited from the engine's. */
  env: Readonly<Record<string, string>>;
  /** Run inside this box (bubblewrap); group kill, timeout and capture work as without. */
  sandbox?: SandboxBox | undefined;
  /** Between SIGTERM and SIGKILL when the group is stopped; 0 sends SIGKILL at once. Default KILL_GRACE_MS. */
  killGraceMs?: number;
}

export interface StartedProcess {
  /** stdin, stdout and stderr are pipes; the caller must read stdout and stderr so the child never blocks on them. */
  child: ChildProcessWithoutNullStreams;
  /**
   * Closes the child's stdin, signals its whole group (SIGTERM, SIGKILL after the grace) and
   * resolves once the child has exited. Calling it again returns the same promise.
   */
  stopGroup(): Promise<void>;
}

/** Rejects when the process cannot be started (`failure` says why). */
export class ProcessStartError extends Error {
  constructor(readonly failure: SpawnFailure) {
    super(`${failure.file || "(empty command)"}: ${failure.reason}: ${failure.message}`);
    this.name = "ProcessStartError";
  }
}

/** Resolves once the child is running. Until stopGroup, the group lives as long as the child wants, or until the engine exits. */
export function startProcess(request: StartRequest): Promise<StartedProcess> {
  const spawned = spawnGroupLeader(request.argv, { cwd: request.cwd, env: request.env, sandbox: request.sandbox, stdin: "pipe" });
  if ("reason" in spawned) return Promise.reject(new ProcessStartError(spawned));
  // All three streams are pipes, as asked.
  const child = spawned as ChildProcessWithoutNullStreams;
  return new Promise((resolve, reject) => {
    child.once("error", (error) => {
      if (child.pid === undefined) reject(new ProcessStartError(spawnFailure(request.argv[0] ?? "", request.cwd, error)));
    });
    // Writing to a child that has gone fails with EPIPE; the caller learns of it from the child's exit.
    child.stdin.on("error", () => {});
    child.once("spawn", () => {
      const group = processGroup(child.pid!, request.killGraceMs ?? KILL_GRACE_MS);
      // A stopped child that exits on its own needs no signals; its leftover group members still get SIGKILL at stopGroup.
      const exited = new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) done();
        else child.once("exit", () => done());
      });
      let stopped: Promise<void> | null = null;
      resolve({
        child,
        stopGroup() {
          stopped ??= (async () => {
            child.stdin.end();
            group.stop();
            await exited;
            group.release();
          })();
          return stopped;
        },
      });
    });
  });
}
