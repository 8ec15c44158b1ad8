// Taking a run: one new generation of its owner record per holder, judged (by pid here, by heartbeat elsewhere), exclusive, fenced; a holder knows when it lost.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { fastBeatsAndALiveProcess } from "../support/lease-judging.js";
import { OwnershipLostError, RunRefusedError } from "../../src/errors.js";
import { openJournal } from "../../src/journal/writer.js";
import { readProcStat } from "../../src/process/proc-stat.js";
import { stalePeriodMs } from "../../src/store/lease/judge.js";
import { claimGeneration, listGenerations, ownRecord, paddedRecord, readRecord, recordPath, type OwnerRecord } from "../../src/store/lease/owner-record.js";
import { createFirstOwner, holdNewRun, readCurrentOwner, takeRun } from "../../src/store/lease/take-run.js";
import { stageRunDir, type RunPaths } from "../../src/store/run-dir.js";
import { runSecrets } from "../../src/secrets.js";
import { parseRunId } from "../../src/store/run-id.js";

// Beats every 100 ms here, so a holder is judged after half a second of silence.
const BEAT_MS = 100;
const STALE_MS = 5 * BEAT_MS;

let workDir: string;
let paths: RunPaths;

// A node process that started before any record below names it: a record naming it is judged alive.
const lease = fastBeatsAndALiveProcess(BEAT_MS);
beforeEach(() => {
  workDir = mkdtempSync(join(tmpdir(), "store-lock-"));
  const staged = stageRunDir(workDir, parseRunId("r1"));
  writeFileSync(staged.paths.journal, `${JSON.stringify({ seq: 1, timestamp: "t", type: "USER_MESSAGE", content: "a" })}\n`);
  paths = staged.publish();
});
afterEach(() => rmSync(workDir, { recursive: true, force: true }));

const take = (force = false, progress?: (line: string) => void) => takeRun(paths, { runId: "r1", workDir, force, ...(progress ? { progress } : {}) });

/** How a take ended, how long it took, and whether it watched the holder's heartbeat (what the janitor says it waits for). */
async function timedTake(force = false): Promise<{ ms: number; watched: boolean; hold?: Awaited<ReturnType<typeof take>>; error?: unknown }> {
  const start = performance.now();
  let watched = false;
  const progress = (line: string): void => {
    if (line.includes("watching its heartbeat")) watched = true;
  };
  try {
    const hold = await take(force, progress);
    return { ms: performance.now() - start, watched, hold };
  } catch (error) {
    return { ms: performance.now() - start, watched, error };
  }
}

/** Writes the next generation as if process `pid` (of this host, unless `changes` say otherwise) held the run. */
function recordFor(pid: number, changes: Partial<OwnerRecord> = {}): number {
  const generation = (listGenerations(paths.lock)[0] ?? 0) + 1;
  expect(claimGeneration(paths.lock, { ...ownRecord(generation, null), pid, start_ticks: readProcStat(pid)?.startTicks ?? null, ...changes })).toBe(true);
  return generation;
}

/** A holder on another machine (another machine id and boot id), with this host's name: clones look like this. */
const elsewhere: Partial<OwnerRecord> = { machine_id: "0123456789abcdef0123456789abcdef", boot_id: "00000000-1111-2222-3333-444444444444" };

/** Bumps the heartbeat of `generation`'s record every beat, as its live holder would, until stopped. */
function beatFor(generation: number): () => void {
  const timer = setInterval(() => {
    const record = readRecord(paths.lock, generation)?.record;
    if (record) writeFileSync(recordPath(paths.lock, generation), paddedRecord({ ...record, heartbeat: (record.heartbeat ?? 0) + 1 }));
  }, BEAT_MS / 2);
  return () => clearInterval(timer);
}

const journalInode = (): number => statSync(paths.journal).ino;

describe("the owner record", () => {
  it("is created once per generation: a second claim of the same generation fails", () => {
    expect(claimGeneration(paths.lock, ownRecord(1, null))).toBe(true);
    expect(claimGeneration(paths.lock, { ...ownRecord(1, null), pid: 4242 })).toBe(false);
    expect(JSON.parse(readFileSync(recordPath(paths.lock, 1), "utf8"))).toMatchObject({ version: 1, generation: 1, pid: process.pid, heartbeat: 0, heartbeat_ms: BEAT_MS });
    expect(readdirSync(paths.lock)).toEqual(["1.json"]);
  });

  it("names its host by machine id, boot id and PID namespace, and its process by its start", () => {
    const record = ownRecord(1, null);
    expect(record.machine_id).toBe(readFileSync("/etc/machine-id", "utf8").trim());
    expect(record.boot_id).toBe(readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim());
    expect(record.pid_namespace).toMatch(/^pid:\[\d+\]$/);
    const stat = readFileSync("/proc/self/stat", "utf8");
    expect(record.start_ticks).toBe(Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]));
  });

  it("is private to its owner", () => {
    createFirstOwner(paths);
    expect(statSync(paths.lock).mode & 0o777).toBe(0o700);
    expect(statSync(recordPath(paths.lock, 1)).mode & 0o777).toBe(0o600);
  });
});

describe("takeRun, the holder on this host", () => {
  it("refuses while a live process holds the run, naming its pid, at once and creating nothing", async () => {
    recordFor(lease.live.pid!);
    const refused = await timedTake();
    expect(refused.error).toBeInstanceOf(RunRefusedError);
    expect(String(refused.error)).toContain(`still active (PID ${lease.live.pid})`);
    expect(refused.watched).toBe(false);
    expect(listGenerations(paths.lock)).toEqual([1]);
  });

  it("says so when the live holder is stopped (SIGSTOP)", async () => {
    recordFor(lease.live.pid!);
    lease.live.kill("SIGSTOP");
    try {
      while (readProcStat(lease.live.pid!)?.state !== "T") await sleep(10);
      await expect(take()).rejects.toThrow(/PID \d+.*stopped.*--force/s);
    } finally {
      lease.live.kill("SIGCONT");
    }
  });

  it("takes a released run at once, without touching the journal", async () => {
    const first = recordFor(lease.live.pid!, { released_at_unix: Date.now() });
    const inode = journalInode();
    const { hold, watched } = await timedTake();
    expect(watched).toBe(false);
    expect(hold!.generation).toBe(first + 1);
    expect(hold!.previous).toMatchObject({ released: true, fence: false });
    expect(journalInode()).toBe(inode);
    hold!.release();
  });

  it("takes the run from a dead holder at once, saying why", async () => {
    const dead = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" });
    await new Promise((resolve) => dead.once("exit", resolve));
    recordFor(dead.pid!);
    const { hold, watched } = await timedTake();
    expect(watched).toBe(false);
    expect(hold!.previous).toMatchObject({ released: false, fence: false, reason: `process ${dead.pid} no longer exists` });
    expect(readCurrentOwner(paths)?.record).toMatchObject({ generation: 2, pid: process.pid, took_over: `process ${dead.pid} no longer exists` });
    hold!.release();
  });

  it("judges a live pid that started at another time than the holder a reused pid", async () => {
    recordFor(lease.live.pid!, { start_ticks: 1 });
    const { hold } = await timedTake();
    expect(hold!.previous?.reason).toMatch(/pid reused/);
    hold!.release();
  });

  it("with --force, refuses a live holder whose heartbeat moves, and takes a silent one after watching it, fencing the journal off", async () => {
    const generation = recordFor(lease.live.pid!);
    const stop = beatFor(generation);
    const refused = await timedTake(true);
    stop();
    expect(String(refused.error)).toMatch(/alive \(its heartbeat went from \d+ to \d+ in 0\.5 s\)/);
    expect(refused.watched).toBe(true);
    expect(refused.ms).toBeGreaterThanOrEqual(STALE_MS);
    expect(listGenerations(paths.lock)).toEqual([generation]);

    const before = readFileSync(paths.journal, "utf8");
    const inode = journalInode();
    const { hold, ms, watched } = await timedTake(true);
    expect(watched).toBe(true);
    expect(ms).toBeGreaterThanOrEqual(STALE_MS);
    expect(hold!.previous).toMatchObject({ released: false, fence: true, reason: expect.stringMatching(/made no heartbeat in 0\.5 s/) });
    expect(journalInode()).not.toBe(inode);
    expect(readFileSync(paths.journal, "utf8")).toBe(before);
    expect(statSync(paths.journal).mode & 0o777).toBe(0o600);
    hold!.release();
  });

  it("refuses a record it cannot read, and takes it with --force once it stays unchanged", async () => {
    mkdirSync(paths.lock);
    writeFileSync(join(paths.lock, "1.json"), "{not json");
    await expect(take()).rejects.toThrow(/owner record cannot be read: .*1\.json: not valid JSON.*--force/s);
    const { hold, ms, watched } = await timedTake(true);
    expect(watched).toBe(true);
    expect(ms).toBeGreaterThanOrEqual(STALE_MS);
    expect(hold!.generation).toBe(2);
    expect(hold!.previous?.reason).toMatch(/could not be read .* did not change in 0\.5 s; --force given/);
    hold!.release();
  });

  it("keeps the previous holder's record and its own, and removes older ones", async () => {
    for (let round = 0; round < 4; round += 1) (await take()).release();
    expect(listGenerations(paths.lock)).toEqual([4, 3]);
  });
});

describe("takeRun, a holder on another host", () => {
  it("is never judged by its pid, even with this host's name and a pid that does not exist here", async () => {
    const dead = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" });
    await new Promise((resolve) => dead.once("exit", resolve));
    const generation = recordFor(dead.pid!, elsewhere);
    const stop = beatFor(generation);
    const refused = await timedTake();
    stop();
    expect(refused.error).toBeInstanceOf(RunRefusedError);
    expect(String(refused.error)).toMatch(/being written by process \d+ on host '.*' \(machine 01234567, boot 00000000\), which is alive/);
    expect(refused.watched).toBe(true);
    expect(refused.ms).toBeGreaterThanOrEqual(STALE_MS);
    expect(listGenerations(paths.lock)).toEqual([generation]);
  });

  it("is taken over without --force once its heartbeat stood still for five of its beats, by this process's clock, and fenced off", async () => {
    recordFor(lease.live.pid!, { ...elsewhere, heartbeat: 41, heartbeat_ms: 150 });
    const inode = journalInode();
    const { hold, ms } = await timedTake();
    expect(ms).toBeGreaterThanOrEqual(5 * 150);
    expect(hold!.previous).toMatchObject({ released: false, fence: true, reason: expect.stringMatching(/made no heartbeat in 0\.8 s \(still at 41\)/) });
    expect(hold!.previous?.owner).toMatchObject({ pid: lease.live.pid, machine_id: elsewhere.machine_id });
    expect(journalInode()).not.toBe(inode);
    hold!.release();
  });

  it("is taken at once when it releases the run while watched", async () => {
    const generation = recordFor(lease.live.pid!, elsewhere);
    const released = setTimeout(() => {
      const record = readRecord(paths.lock, generation)!.record!;
      writeFileSync(recordPath(paths.lock, generation), paddedRecord({ ...record, released_at_unix: Date.now() }));
    }, BEAT_MS);
    const { hold } = await timedTake();
    clearTimeout(released);
    expect(hold!.previous).toMatchObject({ released: true, fence: false });
    hold!.release();
  });

  it("waits the stale period its record promises, and this host's beat when the record names none", () => {
    expect(stalePeriodMs({ ...ownRecord(1, null), heartbeat_ms: 2_000 })).toBe(10_000);
    expect(stalePeriodMs(null)).toBe(STALE_MS);
  });
});

describe("a hold", () => {
  /** The record of generation 1 once its heartbeat has reached `count`: waited for, beat by beat, with a generous ceiling. */
  async function beatsTo(count: number) {
    let record = readRecord(paths.lock, 1)!.record!;
    for (const deadline = Date.now() + 30_000; (record.heartbeat ?? 0) < count && Date.now() < deadline; record = readRecord(paths.lock, 1)!.record!) await sleep(BEAT_MS);
    expect(record.heartbeat ?? 0).toBeGreaterThanOrEqual(count);
    return record;
  }

  it("bumps its heartbeat every beat, keeping the record's size, notes its tool's group at once, and marks the record released", async () => {
    const first = createFirstOwner(paths);
    const hold = holdNewRun(paths, first);
    const file = recordPath(paths.lock, 1);
    const size = statSync(file).size;
    expect(size % 512).toBe(0);
    await beatsTo(2);
    hold.noteToolGroup({ request_seq: 7, pgid: 4242, started_at_unix: 1 });
    expect(readRecord(paths.lock, 1)!.record).toMatchObject({ tool_group: { request_seq: 7, pgid: 4242 } });
    hold.noteToolGroup(null);
    // Gone by the beats that follow.
    await beatsTo((readRecord(paths.lock, 1)!.record!.heartbeat ?? 0) + 2);
    expect(readRecord(paths.lock, 1)!.record).toMatchObject({ tool_group: null });
    hold.release();
    const released = readRecord(paths.lock, 1)!.record!;
    expect(released.released_at_unix).toEqual(expect.any(Number));
    expect(statSync(file).size).toBe(size);
    // No beat after the release: the record stays as released.
    await sleep(BEAT_MS * 3);
    expect(readRecord(paths.lock, 1)!.record).toEqual(released);
    // A beat still writing when the run was released is dropped: its temporary file is removed once its fsync returns,
    // which on a loaded disk can take longer than the beats waited above.
    await vi.waitFor(() => expect(readdirSync(paths.lock)).toEqual(["1.json"]), { timeout: 30_000, interval: 20 });
    expect(readRecord(paths.lock, 1)!.record).toEqual(released);
  });

  it("learns it lost the run, aborts its signal, stops beating, and leaves the new holder's record alone on release", async () => {
    const first = holdNewRun(paths, createFirstOwner(paths));
    expect(first.lostReason()).toBeNull();
    // The next holder judges this process's record (its own pid: not a holder it has to wait for).
    const second = await take();
    expect(first.lostReason()).toMatch(new RegExp(`process ${process.pid} on .* took it over`));
    expect(first.lost.aborted).toBe(true);
    second.release();
    const records = readdirSync(paths.lock).map((name) => readFileSync(join(paths.lock, name), "utf8"));
    await sleep(BEAT_MS * 3);
    first.release();
    expect(readdirSync(paths.lock).map((name) => readFileSync(join(paths.lock, name), "utf8"))).toEqual(records);
    expect(readCurrentOwner(paths)?.record?.released_at_unix).toEqual(expect.any(Number));
  });

  it("stops a journal writer before its next append once the run was taken and the journal fenced", async () => {
    const generation = recordFor(lease.live.pid!);
    const old = await openJournal(paths.journal, { secrets: runSecrets([]), owner: () => (existsSync(recordPath(paths.lock, generation + 1)) ? "taken over" : null) });
    old.append({ type: "USER_MESSAGE", content: "b" });
    const hold = await take(true);
    expect(() => old.append({ type: "USER_MESSAGE", content: "late" })).toThrow(OwnershipLostError);
    expect(readFileSync(paths.journal, "utf8")).not.toContain("late");
    old.close();
    hold.release();
  });
});
