// Kills process groups if this process dies without stopping them (kill -9 included): a shell waits for the end of a pipe only this process holds.
import { spawn, type ChildProcess } from "node:child_process";
import type { Socket } from "node:net";
import { childStdio } from "./child-stdio.js";

interface DeathWatch {
  /** This process is stopping the groups itself: the watch ends without touching them. */
  release(): void;
}

/**
 * Starts `sh`, in a process group of its own (a Ctrl-C to the terminal's group does not reach it),
 * reading a pipe whose writing end only this process holds. The kernel closes that end when this
 * process exits, however it exits; `read` then returns and the shell sends SIGKILL to every group.
 * Long-lived children such as MCP servers need it: a server busy with a call does not notice that
 * its stdin closed until the call is done. Null when the shell cannot be started.
 */
export function watchForDeath(groups: readonly number[]): DeathWatch | null {
  if (groups.length === 0) return null;
  let watcher: ChildProcess;
  try {
    watcher = spawn("/bin/sh", ["-c", 'read -r _; kill -s KILL -- "$@" 2>/dev/null', "sh", ...groups.map((pgid) => `-${pgid}`)], {
      stdio: childStdio(["pipe", "ignore", "ignore"]).stdio,
      detached: true,
    });
  } catch {
    return null;
  }
  watcher.on("error", () => {});
  watcher.stdin?.on("error", () => {});
  // Neither the shell nor its pipe keeps this process alive.
  watcher.unref();
  (watcher.stdin as Socket | null)?.unref();
  return {
    release() {
      // SIGKILL: the shell ends without reading, so it never sends its own.
      if (watcher.exitCode === null && watcher.signalCode === null) watcher.kill("SIGKILL");
    },
  };
}
