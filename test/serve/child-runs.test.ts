// The runs `delta mcp serve` starts: what a child prints last is read as a RunResult (validated, kept as written), and a child that prints none still answers with a whole RunResult v2.0.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunResultSchema } from "../../src/run/run-result.js";
import { ChildRuns } from "../../src/serve/child-runs.js";
import { waitFor } from "../e2e/harness.js";
import { parseRunId } from "../../src/store/run-id.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "child-runs-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** ChildRuns whose `delta` is a script printing `stdout` and exiting with `code`. */
function runsOf(stdout: string, code = 0): ChildRuns {
  return runsOfScript(`process.stdout.write(${JSON.stringify(stdout)}); process.exitCode = ${code};\n`);
}

function runsOfScript(source: string, termGraceMs = 1_000): ChildRuns {
  const script = join(dir, "fake-delta.mjs");
  writeFileSync(script, source);
  return new ChildRuns({ execPath: process.execPath, script, agentHome: dir, workDir: dir, termGraceMs, log: () => {} });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const usage = { input_tokens: 1, cached_input_tokens: 0, cache_write_input_tokens: 0, output_tokens: 1, reasoning_tokens: 0, total_cost_usd: null, model_usage: {} };
const completed = { schema_version: "2.0", run_id: "r1", trace_id: null, status: "COMPLETED", result: "ok", result_text: "ok", metrics: { iterations: 1, duration_ms: 5, start_time: "a", end_time: "b", usage }, metadata: { agent_name: "a", workspace_path: "/w" }, added_in_2_1: true };

describe("ChildRuns", () => {
  it("answers with the child's RunResult as it printed it, a field of a later 2.x included", async () => {
    const run = runsOf(`${JSON.stringify({ seq: 1, type: "ENGINE_START" })}\n${JSON.stringify(completed)}\n`).start({ kind: "run", runId: parseRunId("r1"), message: "go", owner: "client" });
    expect(await run.done).toEqual(completed);
  });

  it("counts a model reply by the event's type, not by words another line holds (a tool's arguments)", async () => {
    const event = (seq: number, type: string, extra: Record<string, unknown> = {}) => JSON.stringify({ seq, timestamp: "t", type, ...extra });
    const lines = [event(1, "ENGINE_START"), event(2, "THOUGHT"), event(3, "ACTION_REQUEST", { tool_args: { type: "THOUGHT" } }), event(4, "THOUGHT"), JSON.stringify(completed)];
    const run = runsOf(`${lines.join("\n")}\n`).start({ kind: "run", runId: parseRunId("r1"), message: "go", owner: "client" });
    const seen: number[] = [];
    run.onIteration((iteration) => seen.push(iteration));
    await run.done;
    expect(run.iterations).toBe(2);
    expect(seen).toEqual([1, 2]);
  });

  it("stops a run that ignores SIGTERM through the process runner: its whole group, SIGKILL once the grace is over", async () => {
    const pidFile = join(dir, "grandchild.pid");
    const runs = runsOfScript(
      `import { spawn } from "node:child_process"; import { writeFileSync } from "node:fs";
       const sleeper = spawn("sleep", ["300"], { stdio: "ignore" });
       writeFileSync(${JSON.stringify(pidFile)}, String(sleeper.pid));
       process.on("SIGTERM", () => {});
       setInterval(() => {}, 1000);\n`,
      200,
    );
    const run = runs.start({ kind: "continue", runId: parseRunId("r3"), owner: "client" });
    await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, "utf8") !== "");
    const grandchild = Number(readFileSync(pidFile, "utf8"));
    await runs.interrupt("client");
    expect(await run.done).toMatchObject({ status: "FAILED", error: { message: expect.stringContaining("ended (SIGKILL)") } });
    await waitFor(() => !alive(grandchild));
  });

  it("answers a child that ends without a RunResult with a whole FAILED RunResult saying so", async () => {
    const run = runsOf(`${JSON.stringify({ ...completed, metrics: undefined })}\n`, 3).start({ kind: "continue", runId: parseRunId("r2"), owner: "client" });
    const result = await run.done;
    expect(RunResultSchema.safeParse(result).success).toBe(true);
    expect(result).toMatchObject({ run_id: "r2", status: "FAILED", error: { type: "ENGINE_ERROR", message: expect.stringContaining("ended (exit 3) without a RunResult") }, metadata: { workspace_path: dir } });
  });
});
