// Stops a child's whole process group: SIGTERM, then SIGKILL after a grace; and kills what is left if the engine exits.

/** Time a process group gets between SIGTERM and SIGKILL, unless the caller chooses another. */
export const KILL_GRACE_MS = 2_000;

/** Groups started and not yet settled; each is killed if this process exits first (a second Ctrl-C, say). */
const liveGroups = new Set<number>();

function killLiveGroups(): void {
  for (const pid of liveGroups) signalGroup(pid, "SIGKILL");
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
