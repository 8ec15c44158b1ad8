// What Linux's /proc says about a process: its state, group, session and start time; null wherever /proc cannot tell.
import { readFileSync, readdirSync } from "node:fs";

export interface ProcStat {
  /** R, S, D, T (stopped), Z (zombie), X (dead)… */
  state: string;
  pgrp: number;
  session: number;
  /** When the process started, in clock ticks after this boot: with the boot id, it names one process exactly. */
  startTicks: number;
}

/** /proc counts a process's start in USER_HZ ticks, 100 a second on every Linux architecture Node runs on. */
const CLOCK_TICKS_PER_SECOND = 100;

export function readProcStat(pid: number): ProcStat | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  let line: string;
  try {
    line = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // The command name may hold spaces and parentheses: the fields start after the last ")".
  const fields = line.slice(line.lastIndexOf(")") + 2).split(" ");
  const [state, pgrp, session, startTicks] = [fields[0] ?? "", Number(fields[2]), Number(fields[3]), Number(fields[19])];
  if (!Number.isInteger(pgrp) || !Number.isInteger(session) || !Number.isInteger(startTicks)) return null;
  return { state, pgrp, session, startTicks };
}

/** Whether a process `pid` exists (kill(0) reaches it, or it is someone else's). */
export function answersSignals(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** When process `pid` started (Unix ms), as /proc tells it; null when it is gone, a zombie, or /proc cannot say. */
export function processStartedAt(pid: number): number | null {
  const stat = answersSignals(pid) ? readProcStat(pid) : null;
  return stat === null || isGone(stat) ? null : startTimeMs(stat);
}

/** A killed process its parent has not reaped yet still answers kill(0) but runs nothing. */
export function isGone(stat: ProcStat | null): boolean {
  return stat === null || stat.state === "Z" || stat.state === "X";
}

/** When a process started (Unix ms), from its ticks and the boot time in /proc/stat (whole seconds), or null. */
export function startTimeMs(stat: ProcStat): number | null {
  const bootSeconds = bootTimeSeconds();
  return bootSeconds === null ? null : bootSeconds * 1000 + (stat.startTicks * 1000) / CLOCK_TICKS_PER_SECOND;
}

let bootTime: number | null | undefined;

/** The boot time in /proc/stat, read once: it is fixed for a boot, and a group's members are timed one by one. */
function bootTimeSeconds(): number | null {
  if (bootTime !== undefined) return bootTime;
  try {
    const bootLine = readFileSync("/proc/stat", "utf8").split("\n").find((line) => line.startsWith("btime "));
    const seconds = Number(bootLine?.split(/\s+/)[1]);
    bootTime = Number.isFinite(seconds) ? seconds : null;
  } catch {
    bootTime = null;
  }
  return bootTime;
}

/** The pids this process can see in /proc (its PID namespace); none where there is no /proc. */
export function visiblePids(): number[] {
  try {
    return readdirSync("/proc").filter((name) => /^[1-9][0-9]*$/.test(name)).map(Number);
  } catch {
    return [];
  }
}

/** This process's own start in ticks after boot, or null off Linux. */
export function ownStartTicks(): number | null {
  return readProcStat(process.pid)?.startTicks ?? null;
}
