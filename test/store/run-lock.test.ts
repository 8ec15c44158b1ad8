import { existsSync, mkdtempSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunRefusedError } from "../../src/errors.js";
import { acquireRunLock, forceBreakRunLock } from "../../src/store/run-lock.js";
import { stageRunDir, type RunPaths } from "../../src/store/run-dir.js";
import { writeMetadata } from "../../src/store/run-metadata.js";

let workDir: string;
let paths: RunPaths;
beforeEach(() => {
  workDir = mkdtempSync(join(tmpdir(), "store-lock-"));
  paths = stageRunDir(workDir, "r1").publish();
});
afterEach(() => rmSync(workDir, { recursive: true, force: true }));

describe("acquireRunLock", () => {
  it("refuses a second holder while the lock is held, naming the holder's pid", async () => {
    writeMetadata(paths, {
      run_id: "r1", workspace_id: "ws", agent_name: "a", status: "RUNNING", created_at: "t", updated_at: "t", end_time: null,
      initial_message: "m", iterations: 0, max_iterations: 5, error: null, agent_home: "/a", work_dir: workDir,
      pid: 4242, hostname: "host-a", start_time_unix: 0, process_name: "node",
    });
    const release = await acquireRunLock(paths);
    await expect(acquireRunLock(paths)).rejects.toThrow(RunRefusedError);
    await expect(acquireRunLock(paths)).rejects.toThrow("run r1 is being written by another process (pid 4242 on host-a)");
    await release();
  });

  it("can be taken again after release, and release twice is harmless", async () => {
    const release = await acquireRunLock(paths);
    await release();
    await release();
    expect(existsSync(paths.lock)).toBe(false);
    const again = await acquireRunLock(paths);
    await again();
  });

  it("takes over a lock left by a dead holder once it is stale", async () => {
    const release = await acquireRunLock(paths);
    const old = new Date(Date.now() - 60_000);
    utimesSync(paths.lock, old, old);
    const taken = await acquireRunLock(paths, { onCompromised: () => undefined });
    await taken();
    await release();
  });

  it("lets the janitor break a fresh lock once it has proven the holder dead", async () => {
    const messages: string[] = [];
    const release = await acquireRunLock(paths, { onCompromised: (message) => messages.push(message) });
    forceBreakRunLock(paths);
    expect(existsSync(paths.lock)).toBe(false);
    const taken = await acquireRunLock(paths);
    await taken();
    await release();
  });
});
