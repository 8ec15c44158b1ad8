// Whether a process is still running, as tests of killing process groups need to know: zombies count as gone.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";

/** A killed process may linger as a zombie when no init reaps orphans; it counts as dead. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = procStat(pid);
  // Without /proc (not Linux) a successful signal 0 is the best evidence there is.
  if (stat === null) return !existsSync("/proc/self");
  return stat.charAt(stat.lastIndexOf(")") + 2) !== "Z";
}

/** Polls every 20 ms, up to this ceiling: generous, for a busy machine; a check that holds returns at once. */
const CEILING_MS = 30_000;

/** A signalled process dies when the kernel next schedules it, which on a busy machine is not at once. */
export async function diesSoon(pid: number): Promise<boolean> {
  for (let attempt = 0; attempt < CEILING_MS / 20 && isAlive(pid); attempt += 1) await new Promise((resolve) => setTimeout(resolve, 20));
  return !isAlive(pid);
}

function procStat(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
}

/** The pid a test's script wrote to `file`, once it is there. */
export async function pidFrom(file: string, timeoutMs = CEILING_MS): Promise<number> {
  for (let attempt = 0; attempt < timeoutMs / 20; attempt += 1) {
    const text = existsSync(file) ? readFileSync(file, "utf8").trim() : "";
    if (text !== "") return Number(text);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no pid written to ${file}`);
}

/** Every live (not zombie) process in process group `pgid`, from /proc; empty where /proc is missing. */
export function groupMembers(pgid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  return entries.map(Number).filter((pid) => {
    const stat = procStat(pid);
    if (stat === null) return false;
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[0] !== "Z" && Number(fields[2]) === pgid;
  });
}

/** Waits (bounded) until group `pgid` has no live member; true when it emptied. */
export async function groupEmptiesSoon(pgid: number): Promise<boolean> {
  for (let attempt = 0; attempt < CEILING_MS / 20 && groupMembers(pgid).length > 0; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 20));
  return groupMembers(pgid).length === 0;
}

/** The pid of the engine's death-watch shell for group `pgid` (its command line names the group), or null. */
export function deathWatchOf(pgid: number): number | null {
  for (const name of readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))) {
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      if (cmdline.includes(`-${pgid}`) && cmdline.some((part) => part.includes("read -r _"))) return Number(name);
    } catch {
      // The process ended while the list was read.
    }
  }
  return null;
}

/**
 * Writes an executable file from a child process. A file this process holds open for writing is held too, from fork to
 * exec, by every child another worker thread starts meanwhile, and executing it in that window fails with ETXTBSY.
 */
export function writeExecutable(path: string, text: string): void {
  execFileSync("sh", ["-c", 'cat > "$1" && chmod 755 "$1"', "sh", path], { input: text });
}
