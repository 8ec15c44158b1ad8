// The janitor: decides whether a run marked RUNNING still has a live engine process behind it.
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { RunRefusedError } from "../errors.js";

export interface HolderFacts {
  run_id: string;
  pid: number;
  hostname: string;
  /** When the recorded engine began this hold on the run (metadata start_time_unix, ms). */
  start_time_unix: number;
}

/** /proc gives a process's start in clock ticks (100 a second on Linux) after a boot time in whole seconds: allow for that. */
const START_TIME_SLACK_MS = 2_000;
const CLOCK_TICKS_PER_SECOND = 100;

export type HolderAssessment =
  | { state: "alive" }
  | { state: "dead"; reason: string }
  | { state: "other-host"; host: string };

/** Looks at the recorded engine process without changing anything. */
export function assessHolder(facts: HolderFacts): HolderAssessment {
  if (facts.hostname !== hostname()) return { state: "other-host", host: facts.hostname };
  if (facts.pid === process.pid) return { state: "dead", reason: `process ${facts.pid} is this process` };
  const stat = isProcessAlive(facts.pid) ? procStatFields(facts.pid) : undefined;
  if (stat === undefined || isZombie(stat)) return { state: "dead", reason: `process ${facts.pid} no longer exists` };
  const name = processName(facts.pid);
  if (name !== null && !/node|delta/i.test(name)) {
    return { state: "dead", reason: `process ${facts.pid} is now '${name}', not a delta engine (pid reused)` };
  }
  const started = processStartTimeMs(stat);
  if (started !== null && started > facts.start_time_unix + START_TIME_SLACK_MS) {
    return { state: "dead", reason: `process ${facts.pid} started after the run did, so it is not the run's engine (pid reused)` };
  }
  return { state: "alive" };
}

/**
 * Returns why the holder is gone, or refuses (126) when it may still be running. `provenDead` says the holder was
 * checked on this host, so its lock may be broken at once; a forced cross-host verdict is only the user's word, and
 * the lock must then go stale (stop being refreshed) before another process may take it.
 */
export function checkHolder(facts: HolderFacts, options: { force: boolean }): { reason: string; provenDead: boolean } {
  const assessment = assessHolder(facts);
  switch (assessment.state) {
    case "dead":
      return { reason: assessment.reason, provenDead: true };
    case "other-host":
      if (options.force) return { reason: `started on host '${assessment.host}'; --force given`, provenDead: false };
      throw new RunRefusedError(
        `Run ${facts.run_id} was started on host '${assessment.host}'.\n` +
          `Cannot verify process status from host '${hostname()}'.\n` +
          "If you're certain the original process is dead, use --force.",
      );
    case "alive":
      throw new RunRefusedError(
        `Run ${facts.run_id} is still active (PID ${facts.pid}).\nCannot continue while original process is running.`,
      );
  }
}

function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The fields of /proc/<pid>/stat after the parenthesized command name (state first), or null where that cannot be read. */
function procStatFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** A killed process its parent has not reaped yet still answers kill(0) but runs nothing. */
function isZombie(stat: string[] | null): boolean {
  return stat?.[0] === "Z" || stat?.[0] === "X";
}

/** The process's command line on Linux (/proc), or null where that cannot be read. */
function processName(pid: number): string | null {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").trim();
    return cmdline || readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return null;
  }
}

/** When the process started (Unix ms) from its stat fields and /proc/stat's btime, or null where that cannot be read. */
function processStartTimeMs(stat: string[] | null): number | null {
  if (stat === null) return null;
  try {
    // starttime is field 22 of the whole line, the 20th after ")".
    const ticks = Number(stat[19]);
    const bootLine = readFileSync("/proc/stat", "utf8").split("\n").find((line) => line.startsWith("btime "));
    const bootSeconds = Number(bootLine?.split(/\s+/)[1]);
    if (!Number.isFinite(ticks) || !Number.isFinite(bootSeconds)) return null;
    return bootSeconds * 1000 + (ticks * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return null;
  }
}
