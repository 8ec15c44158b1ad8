// A child as the leader of its own process group: started without a shell, stopped with its whole group, killed if the engine exits.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, statSync } from "node:fs";
import { childStdio } from "./child-stdio.js";
import { carryProxyConnections } from "./sandbox/proxy-channel.js";
import { bwrapArgv, type PathKind, type SandboxBox } from "./sandbox/argv.js";
import { emptyCommand, spawnFailure, type SpawnFailure } from "./spawn-failure.js";

/** Time a process group gets between SIGTERM and SIGKILL, unless the caller chooses another. */
export const KILL_GRACE_MS = 2_000;

/** Groups started and not yet settled; each is killed if this process exits first (a second Ctrl-C, say). */
const liveGroups = new Set<number>();

function killLiveGroups(): void {
  for (const pid of liveGroups) signalGroup(pid, "SIGKILL");
}

interface SpawnOptions {
  cwd: string;
  /** The process's whole environment: nothing is inherited from the engine's. */
  env: Readonly<Record<string, string>>;
  stdin: "ignore" | "pipe";
  /** Run inside this box (bubblewrap); the group leader is then bwrap, whose namespaces die with it. */
  sandbox?: SandboxBox | undefined;
}

/**
 * Starts argv without a shell, stdout and stderr piped, as the leader of a new process group, so
 * a signal to the group reaches every process it starts. No descriptor the engine inherited reaches
 * it (child-stdio.ts). What spawn refuses at once (an empty command, a NUL byte in an argument, a box
 * whose seccomp program cannot be read) comes back as a failure; later failures come as its "error" event.
 */
export function spawnGroupLeader(command: readonly string[], options: SpawnOptions): ChildProcess | SpawnFailure {
  if (command[0] === undefined || command[0] === "") return emptyCommand(options.cwd);
  const box = options.sandbox;
  const base = [options.stdin, "pipe", "pipe"] as const;
  if (box === undefined) return spawnLeader(command, childStdio(base).stdio, options);
  const network = box.network;
  let program: number | null = null;
  if (network.kind !== "on") {
    try {
      program = openSync(network.seccomp, "r");
    } catch (error) {
      return spawnFailure(network.seccomp, options.cwd, error);
    }
  }
  try {
    // bwrap reads the program from its descriptor; a proxied box's forwarder asks for connections over the IPC channel.
    const { stdio, places } = childStdio(base, [...(program === null ? [] : [program]), ...(network.kind === "proxy" ? ["ipc" as const] : [])]);
    const spawned = spawnLeader(bwrapArgv(box, command, options.cwd, pathKind, places[0]), stdio, options);
    if (network.kind === "proxy" && !("reason" in spawned)) carryProxyConnections(spawned, network.socket);
    return spawned;
  } finally {
    // The child has its own copy by now: spawn returns once bwrap was executed.
    if (program !== null) closeSync(program);
  }
}

function spawnLeader(argv: readonly string[], stdio: ReturnType<typeof childStdio>["stdio"], options: SpawnOptions): ChildProcess | SpawnFailure {
  const [file, ...args] = argv;
  if (file === undefined) return emptyCommand(options.cwd);
  try {
    return spawn(file, args, { cwd: options.cwd, env: options.env, stdio, detached: true });
  } catch (error) {
    return spawnFailure(file, options.cwd, error);
  }
}

function pathKind(target: string): PathKind {
  try {
    return statSync(target).isDirectory() ? "dir" : "file";
  } catch {
    return "missing";
  }
}

export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: every member of the group has already exited.
  }
}

export interface ProcessGroup {
  /** SIGTERM to the group now (SIGKILL when the grace is 0), SIGKILL once the grace is over. */
  stop(): void;
  readonly stopping: boolean;
  /** The caller is done with the group: members of a stopped group that let go of the pipes are killed now. */
  release(): void;
}

/** `pid` leads its own group (spawned with `detached: true`). */
export function processGroup(pid: number, graceMs: number): ProcessGroup {
  if (liveGroups.size === 0) process.on("exit", killLiveGroups);
  liveGroups.add(pid);
  let stopping = false;
  let forceTimer: NodeJS.Timeout | undefined;
  return {
    get stopping() {
      return stopping;
    },
    stop() {
      if (stopping) return;
      stopping = true;
      if (graceMs <= 0) {
        signalGroup(pid, "SIGKILL");
        return;
      }
      signalGroup(pid, "SIGTERM");
      forceTimer = setTimeout(() => signalGroup(pid, "SIGKILL"), graceMs);
    },
    release() {
      clearTimeout(forceTimer);
      if (stopping) signalGroup(pid, "SIGKILL");
      liveGroups.delete(pid);
      if (liveGroups.size === 0) process.off("exit", killLiveGroups);
    },
  };
}
