// A tool left running by an engine killed with -9: continue on the same host ends what is left of its process group before the model hears of it.
import { readFileSync } from "node:fs";
import { readJournal } from "../support/journal-read.js";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { readCurrentOwner } from "../../src/store/lease/take-run.js";
import { runPaths } from "../../src/store/run-dir.js";
import { reply, toolResultsOf, type MockLlm } from "../support/mock-llm.js";
import { diesSoon, pidFrom } from "../support/processes.js";
import { delta, modelEnv, runDir, spawnDelta, toolGroupNoted, writeAgent, setUpE2e } from "./harness.js";
import { parseRunId } from "../../src/store/run-id.js";

// The tool starts a helper in its own group, writes both pids, and waits for ever: only a kill ends it.
const TOOLS = `tools:
  - name: build
    shell: "sleep 300 & echo $! > helper.pid; echo $$ > leader.pid; wait"
`;

const { root, serve } = setUpE2e("delta-leftover-tool-");
let server: MockLlm;
let agent: string;
/** Whatever a failed assertion leaves running. */
const strays: number[] = [];
/** For each time the model was told a tool's result: which of the tools' processes were still running then. */
const toldWhileAlive: number[][] = [];

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^\S+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

beforeAll(async () => {
  agent = writeAgent(root, { tools: TOOLS });
  server = await serve((request) => {
    if (toolResultsOf(request).length === 0) return reply.toolCalls([{ name: "build", arguments: {} }]);
    toldWhileAlive.push(strays.filter(isRunning));
    return reply.text(`told: ${toolResultsOf(request)[0]}`);
  });
});
afterAll(async () => {
  for (const pid of strays) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
});

/** Starts run `runId` and resolves once its tool has started its helper: the engine, and the pids of the group's leader and helper. */
async function toolRunning(ws: string, runId: string) {
  const engine = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", runId, "-m", "build it"], { env: modelEnv(server.baseUrl) });
  const leader = await pidFrom(join(ws, "leader.pid"), 15_000);
  const helper = await pidFrom(join(ws, "helper.pid"));
  strays.push(leader, helper);
  expect(await toolGroupNoted(ws, runId)).toBe(leader);
  return { engine, leader, helper };
}

describe("continue after the engine was killed while its tool ran", () => {
  it("kills what is left of the tool's process group, then tells the model the result is unknown", async () => {
    const ws = join(root, "ws");
    const { engine, leader, helper } = await toolRunning(ws, "left");
    // The group is in the owner record, naming the ACTION_REQUEST it runs for.
    const record = readCurrentOwner(runPaths(ws, parseRunId("left")))!.record!;
    const request = readJournal(join(runDir(ws, "left"), "journal.jsonl")).find((event) => event.type === "ACTION_REQUEST")!;
    expect(record.tool_group).toMatchObject({ pgid: leader, request_seq: request.seq });

    engine.kill("SIGKILL");
    await engine;
    // kill -9 leaves the tool running: nothing of the engine's could stop it.
    expect(() => process.kill(leader, 0)).not.toThrow();
    expect(() => process.kill(helper, 0)).not.toThrow();

    const resumed = await delta(["continue", "--run-id", "left", "-w", ws, "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(new RegExp(`\\[Janitor\\] Killed what was left of the previous engine's tool build \\(process group ${leader}: 2 processes\\)`));
    expect(await diesSoon(leader)).toBe(true);
    expect(await diesSoon(helper)).toBe(true);
    // When the model heard the result was unknown, neither was running any more.
    expect(toldWhileAlive).toEqual([[]]);
    // The order in the journal: the orphaned run is recorded with the kill, then the unknown result, then the model's answer.
    const events = readJournal(join(runDir(ws, "left"), "journal.jsonl"));
    const orphaned = events.find((event) => event.type === "ERROR");
    expect(orphaned).toMatchObject({ error_type: "ORPHANED_RUN", error_message: expect.stringContaining(`process group ${leader}`) });
    const result = events.find((event) => event.type === "ACTION_RESULT");
    expect(result).toMatchObject({ status: "ERROR", observation_content: expect.stringContaining("may or may not have taken effect") });
    expect(result!.seq).toBeGreaterThan(orphaned!.seq);
    expect(JSON.parse(resumed.stdout).result).toMatch(/^told: \[error\] The engine stopped before this action finished/);
  });

  it("kills nothing and says nothing of it when the tool's group had already ended", async () => {
    const ws = join(root, "ws-reused");
    const { engine, leader } = await toolRunning(ws, "reused");
    engine.kill("SIGKILL");
    await engine;
    // The tool's group ends before the continue; the record still names it.
    process.kill(-leader, "SIGKILL");
    expect(await diesSoon(leader)).toBe(true);

    const resumed = await delta(["continue", "--run-id", "reused", "-w", ws, "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stderr).not.toContain("Killed what was left");
    expect(readJournal(join(runDir(ws, "reused"), "journal.jsonl")).find((event) => event.type === "ERROR")?.error_message).not.toContain("process group");
  });
});
