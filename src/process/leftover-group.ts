// Ends what is left of a process group whose parent died (a tool of an engine killed with -9): every member, once it is known to be that group.
import { setTimeout as sleep } from "node:timers/promises";
import { signalGroup } from "./group.js";
import { isGone, readProcStat, startTimeMs, visiblePids, type ProcStat } from "./proc-stat.js";

interface LeftoverGroup {
  pgid: number;
  /** When its leader was spawned (Unix ms, by this machine's clock). */
  startedAtUnix: number;
}

/** /proc gives a start after a boot time in whole seconds; a spawn is recorded a moment after the fork. */
const START_SLACK_MS = 2_000;
const GONE_WAIT_MS = 5_000;

/**
 * SIGKILLs the group and waits (up to 5 s) until none of its members is left; returns the pids it found in it. A group
 * whose leader started at another time than recorded, or whose members started before the leader was spawned, is not
 * that group (its id was reused) and is left alone.
 */
export async function killLeftoverGroup(group: LeftoverGroup): Promise<number[]> {
  const members = membersOf(group.pgid);
  if (members.length === 0 || !isThatGroup(group, members)) return [];
  signalGroup(group.pgid, "SIGKILL");
  const deadline = Date.now() + GONE_WAIT_MS;
  while (membersOf(group.pgid).length > 0 && Date.now() < deadline) await sleep(20);
  return members.map((member) => member.pid);
}

function isThatGroup(group: LeftoverGroup, members: Array<{ pid: number; stat: ProcStat }>): boolean {
  const startOf = (stat: ProcStat): number => startTimeMs(stat) ?? group.startedAtUnix;
  const leader = members.find((member) => member.pid === group.pgid);
  if (leader) return Math.abs(startOf(leader.stat) - group.startedAtUnix) <= START_SLACK_MS;
  return members.every((member) => startOf(member.stat) >= group.startedAtUnix - START_SLACK_MS);
}

function membersOf(pgid: number): Array<{ pid: number; stat: ProcStat }> {
  const members: Array<{ pid: number; stat: ProcStat }> = [];
  for (const pid of visiblePids()) {
    const stat = readProcStat(pid);
    if (stat !== null && !isGone(stat) && stat.pgrp === pgid) members.push({ pid, stat });
  }
  return members;
}
