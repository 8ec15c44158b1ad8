// Taking a run: one new generation of its owner record per holder, judged, exclusive, fenced; a holder knows when it lost.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { OwnershipLostError, RunRefusedError } from "../../src/errors.js";
import { openJournal } from "../../src/journal/writer.js";
import { claimGeneration, listGenerations, ownRecord, recordPath } from "../../src/store/owner-record.js";
import { createFirstOwner, holdNewRun, readCurrentOwner, takeRun } from "../../src/store/run-lock.js";
import { stageRunDir, type RunPaths } from "../../src/store/run-dir.js";

let workDir: string;
let paths: RunPaths;
let live: ChildProcess;

beforeAll(async () => {
  // A node process that started before any record below names it: the janitor must judge it alive.
  live = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
  await new Promise((resolve) => live.once("spawn", resolve));
});
afterAll(() => {
  live.kill("SIGKILL");
});
beforeEach(() => {
  workDir = mkdtempSync(join(tmpdir(), "store-lock-"));
  const staged = stageRunDir(workDir, "r1");
  writeFileSync(staged.paths.journal, `${JSON.stringify({ seq: 1, timestamp: "t", type: "USER_MESSAGE", content: "a" })}\n`);
  paths = staged.publish();
});
afterEach(() => rmSync(workDir, { recursive: true, force: true }));

const take = (force = false) => takeRun(paths, { runId: "r1", workDir, force });

/** Writes the next generation as if another process held the run. */
function recordFor(pid: number, changes: Record<string, unknown> = {}): number {
  const generation = (listGenerations(paths.lock)[0] ?? 0) + 1;
  expect(claimGeneration(paths.lock, { ...ownRecord(generation, null), pid, ...changes })).toBe(true);
  return generation;
}

function age(generation: number): void {
  const old = new Date(Date.now() - 60_000);
  utimesSync(recordPath(paths.lock, generation), old, old);
}

const journalInode = (): number => statSync(paths.journal).ino;

describe("the owner record", () => {
  it("is created once per generation: a second claim of the same generation fails", () => {
    expect(claimGeneration(paths.lock, ownRecord(1, null))).toBe(true);
    expect(claimGeneration(paths.lock, { ...ownRecord(1, null), pid: 4242 })).toBe(false);
    expect(JSON.parse(readFileSync(recordPath(paths.lock, 1), "utf8"))).toMatchObject({ version: 1, generation: 1, pid: process.pid });
    expect(readdirSync(paths.lock)).toEqual(["1.json"]);
  });

  it("is private to its owner", () => {
    createFirstOwner(paths);
    expect(statSync(paths.lock).mode & 0o777).toBe(0o700);
    expect(statSync(recordPath(paths.lock, 1)).mode & 0o777).toBe(0o600);
  });
});

describe("takeRun", () => {
  it("refuses while a live process holds the run, naming its pid, and creates nothing", () => {
    recordFor(live.pid!);
    expect(() => take()).toThrow(RunRefusedError);
    expect(() => take()).toThrow(`still active (PID ${live.pid})`);
    expect(listGenerations(paths.lock)).toEqual([1]);
  });

  it("takes a released run at once, without touching the journal", () => {
    const first = recordFor(live.pid!, { released_at_unix: Date.now() });
    const inode = journalInode();
    const hold = take();
    expect(hold.generation).toBe(first + 1);
    expect(hold.previous).toMatchObject({ released: true, fence: false });
    expect(journalInode()).toBe(inode);
    hold.release();
  });

  it("takes the run from a dead holder at once, saying why", async () => {
    const dead = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" });
    await new Promise((resolve) => dead.once("exit", resolve));
    recordFor(dead.pid!);
    const hold = take();
    expect(hold.previous).toMatchObject({ released: false, fence: false, reason: `process ${dead.pid} no longer exists` });
    expect(readCurrentOwner(paths)?.record).toMatchObject({ generation: 2, pid: process.pid, took_over: `process ${dead.pid} no longer exists` });
    hold.release();
  });

  it("refuses --force while the live holder's record is fresh, and takes it once stale, fencing the journal off", () => {
    const generation = recordFor(live.pid!);
    expect(() => take(true)).toThrow(/still active/);
    age(generation);
    const before = readFileSync(paths.journal, "utf8");
    const inode = journalInode();
    const hold = take(true);
    expect(hold.previous).toMatchObject({ released: false, fence: true });
    expect(journalInode()).not.toBe(inode);
    expect(readFileSync(paths.journal, "utf8")).toBe(before);
    expect(statSync(paths.journal).mode & 0o777).toBe(0o600);
    hold.release();
  });

  it("refuses a record it cannot read, and takes it with --force once stale", () => {
    mkdirSync(paths.lock);
    writeFileSync(join(paths.lock, "1.json"), "{not json");
    expect(() => take(true)).toThrow(/owner record cannot be read: .*1\.json: not valid JSON.*--force/s);
    age(1);
    expect(() => take()).toThrow(/--force/);
    const hold = take(true);
    expect(hold.generation).toBe(2);
    hold.release();
  });

  it("keeps the previous holder's record and its own, and removes older ones", () => {
    for (let round = 0; round < 4; round += 1) take().release();
    expect(listGenerations(paths.lock)).toEqual([4, 3]);
  });
});

describe("a hold", () => {
  it("learns it lost the run, aborts its signal, and leaves the new holder's record alone on release", () => {
    createFirstOwner(paths);
    const first = holdNewRun(paths);
    expect(first.lostReason()).toBeNull();
    // The next holder judges this process's record (its own pid: not a holder it has to wait for).
    const second = take();
    expect(first.lostReason()).toMatch(new RegExp(`process ${process.pid} on .* took it over`));
    expect(first.lost.aborted).toBe(true);
    const records = readdirSync(paths.lock).map((name) => readFileSync(join(paths.lock, name), "utf8"));
    first.release();
    expect(readdirSync(paths.lock).map((name) => readFileSync(join(paths.lock, name), "utf8"))).toEqual(records);
    second.release();
    expect(readCurrentOwner(paths)?.record?.released_at_unix).toEqual(expect.any(Number));
  });

  it("stops a journal writer before its next append once the run was taken and the journal fenced", async () => {
    const generation = recordFor(live.pid!);
    const old = await openJournal(paths.journal, { owner: () => (existsSync(recordPath(paths.lock, generation + 1)) ? "taken over" : null) });
    old.append({ type: "USER_MESSAGE", content: "b" });
    age(generation);
    const hold = take(true);
    expect(() => old.append({ type: "USER_MESSAGE", content: "late" })).toThrow(OwnershipLostError);
    expect(readFileSync(paths.journal, "utf8")).not.toContain("late");
    old.close();
    hold.release();
  });
});
