// The Slurm recipe's scripts without a cluster: the example's stand-in `sbatch` (examples/slurm/local/sbatch) runs each array task at once, so submit, the task script and resume are checked in seconds (test/hosts/slurm-recipe.test.ts runs them on a real Slurm).
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelEnv, removeDir, tempDir } from "../../e2e/harness.js";
import { fault, startMockLlm } from "../../support/mock-llm.js";
import { requireBinary } from "../../support/system-packages.js";
import { EXAMPLES, binDir, pathWith, runScript } from "../../examples/helpers.js";

const SCRIPT = join(EXAMPLES, "slurm/slurm-map.sh");
const TASK_SCRIPT = join(EXAMPLES, "slurm/map-array.sbatch");
const RECORDING = join(EXAMPLES, "slurm/recording");
const SHIPPED_ITEMS = join(EXAMPLES, "slurm/items.txt");


let root: string;
let path: string;

beforeAll(() => {
  requireBinary("jq"); // the scripts read RunResults with jq
  root = tempDir("delta-slurm-example-");
  // The stand-in sbatch the example ships for trying the recipe without a cluster.
  path = `${join(EXAMPLES, "slurm/local")}:${pathWith(binDir(root))}`;
});
afterAll(() => removeDir(root));

function jsonLines(file: string): Array<Record<string, unknown>> {
  return readFileSync(file, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Runs slurm-map.sh with the stand-in sbatch and no model: every run replays the shipped recording. */
function slurmMap(name: string, args: string[], skip = "") {
  return runScript(SCRIPT, args, { cwd: root, env: { PATH: path, LOCAL_SBATCH_LOG: join(root, `${name}.sbatch.log`), LOCAL_SBATCH_SKIP: skip } });
}

const SHIPPED_RESULTS = [
  { item: "the quick brown fox", run_id: "map-0", result: { words: 4 } },
  { item: "jumps over the lazy dog", run_id: "map-1", result: { words: 5 } },
  { item: "pack my box", run_id: "map-2", result: { words: 3 } },
  { item: "with five dozen liquor jugs", run_id: "map-3", result: { words: 5 } },
];

describe.concurrent("examples/slurm/slurm-map.sh", { timeout: 180_000 }, () => {
  it("runs keyless on the shipped items and recordings (-x): a task never run is resubmitted by resume, then every item is collected", async () => {
    const ws = join(root, "ws-keyless");
    const out = join(root, "out-keyless");
    // Task 2 never runs, like a task cancelled while it was pending.
    const submitted = await slurmMap("keyless", ["submit", "-i", SHIPPED_ITEMS, "-w", ws, "-o", out, "-P", "8", "-x", RECORDING, "--", "--partition=main"], "2");
    expect(submitted.exitCode, submitted.stderr).toBe(0);
    expect(submitted.stdout).toMatch(/^\d+\n$/);
    expect(readFileSync(join(root, "keyless.sbatch.log"), "utf8")).toMatch(/^--parsable --array=0-3%8 -o \S+\/slurm-%A_%a\.out --partition=main \S+\/map-array\.sbatch -w \S+ -o \S+ -m \S+\/map-agent -p map -x \S+\/recording$/m);

    const resumed = await slurmMap("keyless", ["resume", "-o", out]);
    expect(resumed.exitCode, resumed.stderr).toBe(3);
    expect(resumed.stderr).toContain("3 of 4 items completed");
    expect(resumed.stderr).toContain("resubmitted 1 items as job array");
    expect(readFileSync(join(root, "keyless.sbatch.log"), "utf8").split("\n")[1]).toMatch(/^--parsable --array=2%8 .* --partition=main /);
    expect(jsonLines(join(out, "remaining.jsonl"))).toEqual([{ item: "pack my box", run_id: "map-2", status: "NO_RUN", error: null, next: "resubmit" }]);

    const finished = await slurmMap("keyless", ["resume", "-o", out]);
    expect(finished.exitCode, finished.stderr).toBe(0);
    expect(finished.stdout).toBe("");
    expect(jsonLines(join(out, "results.jsonl"))).toEqual(SHIPPED_RESULTS);
    // The tool really ran on each item: its observation is wc's count.
    expect(readFileSync(join(ws, ".delta/map-1/journal.jsonl"), "utf8")).toMatch(/"observation_content":"5\\n"/);
  });

  it("takes no empty or torn file for a result: resume rebuilds a completed run's RunResult from its journal, and the task does not run it again", async () => {
    const ws = join(root, "ws-torn");
    const out = join(root, "out-torn");
    expect((await slurmMap("torn", ["submit", "-i", SHIPPED_ITEMS, "-w", ws, "-o", out, "-x", RECORDING])).exitCode).toBe(0);
    // As a task killed while writing would have left them, had it written in place: empty, and cut short.
    writeFileSync(join(out, "map-1.json"), "");
    writeFileSync(join(out, "map-3.json"), readFileSync(join(out, "map-3.json"), "utf8").slice(0, 40));

    // The task itself sees the run completed and exits 0 without a model (there is no recording or key here).
    const again = await runScript(TASK_SCRIPT, ["-w", ws, "-o", out, "-m", join(EXAMPLES, "map-reduce/map-agent")], { cwd: root, env: { PATH: path, SLURM_ARRAY_TASK_ID: "1" } });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).toContain("already COMPLETED; its result is given again from the journal (no model request)");

    const resumed = await slurmMap("torn", ["resume", "-o", out]);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(jsonLines(join(out, "results.jsonl"))).toEqual(SHIPPED_RESULTS);
    expect(JSON.parse(readFileSync(join(out, "map-1.json"), "utf8"))).toMatchObject({ schema_version: "2.0", status: "COMPLETED", result: { words: 5 } });
    expect(JSON.parse(readFileSync(join(out, "map-3.json"), "utf8"))).toMatchObject({ schema_version: "2.0", status: "COMPLETED", metrics: { iterations: expect.any(Number) } });
    for (const id of ["map-1", "map-3"]) expect(readFileSync(join(ws, `.delta/${id}/journal.jsonl`), "utf8").match(/"type":"ENGINE_START"/g)).toHaveLength(1);
    expect(readdirSync(out).filter((file) => file.includes(".tmp"))).toEqual([]);
  });

  it("continues a failed run when resubmitted, and -n reports what it would resubmit without submitting", async () => {
    const ws = join(root, "ws-failed");
    const out = join(root, "out-failed");
    const items = join(root, "failed-items.txt");
    writeFileSync(items, "one two\n");
    // A recording cut after its first reply: replay runs out (REPLAY_ERROR, exit 1) and the run is FAILED.
    const recordings = join(root, "wrong-recording");
    mkdirSync(recordings);
    writeFileSync(join(recordings, "map-0.jsonl"), `${readFileSync(join(RECORDING, "map-0.jsonl"), "utf8").split("\n")[0]}\n`);
    expect((await slurmMap("failed", ["submit", "-i", items, "-w", ws, "-o", out, "-x", recordings])).exitCode).toBe(0);
    expect(JSON.parse(readFileSync(join(out, "map-0.json"), "utf8"))).toMatchObject({ status: "FAILED", error: { type: "REPLAY_ERROR" } });

    const report = await slurmMap("failed", ["resume", "-o", out, "-n"]);
    expect(report.exitCode).toBe(1);
    expect(report.stderr).toContain("to resubmit: map-0");
    expect(jsonLines(join(out, "remaining.jsonl"))).toEqual([expect.objectContaining({ run_id: "map-0", status: "FAILED", next: "resubmit", error: expect.objectContaining({ type: "REPLAY_ERROR" }) })]);
    expect(readFileSync(join(root, "failed.sbatch.log"), "utf8").split("\n").filter(Boolean)).toHaveLength(1);

    // The whole recording now: the resubmitted task continues the FAILED run, which completes.
    copyFileSync(join(RECORDING, "map-0.jsonl"), join(recordings, "map-0.jsonl"));
    expect((await slurmMap("failed", ["resume", "-o", out])).exitCode).toBe(3);
    const finished = await slurmMap("failed", ["resume", "-o", out]);
    expect(finished.exitCode, finished.stderr).toBe(0);
    expect(readFileSync(join(ws, ".delta/map-0/journal.jsonl"), "utf8").match(/"type":"ENGINE_START"/g)).toHaveLength(2);
  });

  it("a task whose run is deferred exits 75; resume resubmits it in an array Slurm begins only once its rate limit has reset", async () => {
    const server = await startMockLlm(() => fault.status(429, { retryAfter: "3600", message: "Rate limit reached for requests" }));
    try {
      const ws = join(root, "ws-deferred");
      const out = join(root, "out-deferred");
      const items = join(root, "deferred-items.txt");
      writeFileSync(items, "one two\n");
      const env = { PATH: path, LOCAL_SBATCH_LOG: join(root, "deferred.sbatch.log"), ...modelEnv(server.baseUrl) };
      const map = (args: string[]) => runScript(SCRIPT, args, { cwd: root, env });
      expect((await map(["submit", "-i", items, "-w", ws, "-o", out])).exitCode).toBe(0);
      const task = JSON.parse(readFileSync(join(out, "map-0.json"), "utf8")) as { status: string; deferred: { reason: string; resume_after: string } };
      expect(task).toMatchObject({ status: "DEFERRED", deferred: { reason: "RATE_LIMITED" } });
      expect(readFileSync(join(out, readdirSync(out).find((file) => file.startsWith("slurm-"))!), "utf8")).toContain("DEFERRED (exit 75)");
      const until = task.deferred.resume_after;

      const report = await map(["resume", "-o", out, "-n"]);
      expect(report.exitCode).toBe(1);
      expect(report.stderr).toContain(`0 to resubmit, 1 deferred until ${until}`);
      expect(report.stderr).toContain(`to resubmit at ${until}: map-0`);
      expect(jsonLines(join(out, "remaining.jsonl"))).toEqual([expect.objectContaining({ run_id: "map-0", status: "DEFERRED", next: `resubmit to begin at ${until} (deferred: RATE_LIMITED)` })]);

      const resumed = await map(["resume", "-o", out]);
      expect(resumed.exitCode, resumed.stderr).toBe(3);
      expect(resumed.stdout).toMatch(/^\d+\n$/);
      const begin = new Date(until);
      const local = `${begin.getFullYear()}-${String(begin.getMonth() + 1).padStart(2, "0")}-${String(begin.getDate()).padStart(2, "0")}T${String(begin.getHours()).padStart(2, "0")}:${String(begin.getMinutes()).padStart(2, "0")}:${String(begin.getSeconds()).padStart(2, "0")}`;
      expect(readFileSync(join(root, "deferred.sbatch.log"), "utf8").split("\n")[1]).toMatch(new RegExp(`^--parsable --array=0 -o \\S+ --begin=${local} \\S+/map-array\\.sbatch `));
    } finally {
      await server.close();
    }
  });

  it("refuses bad usage with exit 2 and says what is wrong", async () => {
    const noItems = await slurmMap("usage", ["submit", "-w", join(root, "ws-usage")]);
    expect(noItems).toMatchObject({ exitCode: 2, stderr: expect.stringContaining("-i ITEMS_FILE is required") });
    const noOut = await slurmMap("usage", ["resume", "-o", join(root, "nothing-here")]);
    expect(noOut).toMatchObject({ exitCode: 2, stderr: expect.stringContaining("must be the directory 'slurm-map.sh submit' wrote") });
    const noTask = await runScript(TASK_SCRIPT, ["-w", root, "-o", root, "-m", root], { cwd: root, env: { PATH: path } });
    expect(noTask).toMatchObject({ exitCode: 2, stderr: expect.stringContaining("SLURM_ARRAY_TASK_ID is not set") });
    expect(existsSync(join(root, "usage.sbatch.log"))).toBe(false);
  });
});
