// End to end: --format stream-json prints the journal's lines as they are appended, then the RunResult; -o also writes the result to a file.
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { reply, type MockLlm } from "../support/mock-llm.js";
import { delta, modelEnv, runDir, spawnDelta, writeAgent, setUpE2e } from "./harness.js";

const { root, serve } = setUpE2e();
let server: MockLlm;


/** A tool that waits until the test creates `go` in the workspace, so the test reads the stream while the run is held at a known point. */
const GATED_TOOL = 'tools:\n  - name: gated\n    shell: "while [ ! -f go ]; do sleep 0.02; done; echo passed"\n';

const journalLines = (ws: string, runId: string): string[] => readFileSync(join(runDir(ws, runId), "journal.jsonl"), "utf8").split("\n").filter((line) => line !== "");

describe("--format stream-json", () => {
  it("streams each journal event as it is appended, gapless, then the RunResult as the last line", async () => {
    server = await serve([reply.toolCalls([{ name: "gated", arguments: {} }]), reply.text("finished")]);
    const agent = writeAgent(root, { tools: GATED_TOOL }, "agent-stream");
    const ws = join(root, "ws-stream");
    const child = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "s1", "-m", "go", "--format", "stream-json"], { env: modelEnv(server.baseUrl) });
    const received: Record<string, unknown>[] = [];
    const raw: string[] = [];
    let sawRequestWhileRunning = false;
    for await (const line of createInterface({ input: child.stdout! })) {
      raw.push(line);
      const value = JSON.parse(line) as Record<string, unknown>;
      received.push(value);
      if (value.type === "ACTION_REQUEST") {
        // The run is held inside the tool: this line arrived while it was going, before the run could end.
        sawRequestWhileRunning = child.exitCode === null && !existsSync(join(ws, "go"));
        writeFileSync(join(ws, "go"), "");
      }
    }
    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(sawRequestWhileRunning).toBe(true);

    const events = received.slice(0, -1);
    expect(events.map((event) => event.seq)).toEqual(events.map((_event, index) => index + 1));
    expect(events.map((event) => event.type)).toEqual(["ENGINE_START", "USER_MESSAGE", "THOUGHT", "ACTION_REQUEST", "ACTION_RESULT", "THOUGHT", "ENGINE_END"]);
    // Exactly the journal's lines, byte for byte: one schema for both.
    expect(raw.slice(0, -1)).toEqual(journalLines(ws, "s1"));
    expect(received.at(-1)).toMatchObject({ schema_version: "2.0", run_id: "s1", status: "COMPLETED", result: "finished" });
    expect(String(result.stdout).endsWith("\n")).toBe(true);
  });

  it("streams what a continue appends, from the seq where the journal stood", async () => {
    server = await serve([reply.text("one"), reply.text("two")]);
    const agent = writeAgent(root, {}, "agent-stream-cont");
    const ws = join(root, "ws-stream-cont");
    await delta(["run", "--agent", agent, "-w", ws, "--run-id", "s2", "-m", "first"], { env: modelEnv(server.baseUrl) });
    const before = journalLines(ws, "s2").length;
    const result = await delta(["continue", "--run-id", "s2", "-w", ws, "-m", "second", "--format", "stream-json"], { env: modelEnv(server.baseUrl) });
    expect(result.exitCode, result.stderr).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines.slice(0, -1)).toEqual(journalLines(ws, "s2").slice(before));
    expect(lines.slice(0, -1).map((line) => (JSON.parse(line) as { seq: number }).seq)).toEqual([before + 1, before + 2, before + 3, before + 4]);
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ status: "COMPLETED", result: "two" });
  });

  it("prints one RunResult line and nothing else for a refusal", async () => {
    const result = await delta(["run", "--agent", join(root, "no-such-agent"), "-m", "x", "--format", "stream-json"]);
    expect(result.exitCode).toBe(126);
    const lines = result.stdout.split("\n").filter((line) => line !== "");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ schema_version: "2.0", status: "REFUSED", error: { type: "CONFIG_ERROR" } });
  });
});

describe("-o/--output", () => {
  it("writes the RunResult (json) or the result (raw) to the file as well, leaving no temporary file", async () => {
    server = await serve([reply.text('{"words": 42}'), reply.text("plain answer")]);
    const agent = writeAgent(root, {}, "agent-output");
    const ws = join(root, "ws-output");
    const outDir = join(root, "out");
    mkdirSync(outDir);
    const json = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "o1", "-m", "count", "--format", "json", "-o", join(outDir, "result.json")], { env: modelEnv(server.baseUrl) });
    expect(json.exitCode, json.stderr).toBe(0);
    expect(readFileSync(join(outDir, "result.json"), "utf8")).toBe(json.stdout);
    expect(JSON.parse(json.stdout)).toMatchObject({ run_id: "o1", result: { words: 42 } });

    const raw = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "o2", "-m", "say", "--format", "raw", "--output", join(outDir, "result.txt")], { env: modelEnv(server.baseUrl) });
    expect(raw.exitCode, raw.stderr).toBe(0);
    expect(readFileSync(join(outDir, "result.txt"), "utf8")).toBe("plain answer\n");
    expect(readdirSync(outDir).sort()).toEqual(["result.json", "result.txt"]);
  });

  it("holds the refusal's RunResult when the run is refused, and refuses a file in a missing folder before anything runs", async () => {
    const out = join(root, "refusal.json");
    const refused = await delta(["run", "--agent", join(root, "no-such-agent"), "-m", "x", "--format", "json", "-o", out]);
    expect(refused.exitCode).toBe(126);
    expect(JSON.parse(readFileSync(out, "utf8"))).toMatchObject({ status: "REFUSED", error: { type: "CONFIG_ERROR" } });

    server = await serve([]);
    const agent = writeAgent(root, {}, "agent-output-missing");
    const ws = join(root, "ws-output-missing");
    const missing = await delta(["run", "--agent", agent, "-w", ws, "-m", "x", "-o", join(root, "no-such-dir", "r.json")], { env: modelEnv(server.baseUrl) });
    expect(missing.exitCode).toBe(126);
    expect(missing.stderr).toContain("does not exist; create it first");
    expect(existsSync(ws)).toBe(false);
    expect(server.requests).toHaveLength(0);
  });
});
