// --replay <run folder> --until-divergence plays recorded replies while each request equals the recorded one and asks the model from the first that differs (journaled where and why); --replay-strict fails there with no model called.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { EventOf, JournalEvent } from "../../src/journal/events.js";
import { reply, toolResultsOf, type MockLlm } from "../support/mock-llm.js";
import { delta, eventTypes, modelEnv, readEvents, runDir, setUpE2e, writeAgent } from "./harness.js";

const { root, serve } = setUpE2e("delta-divergence-");
let agent: string;
let recorded: string;

// The tool's output holds what differs on every run (its run id, its workspace, the time) and what the test changes (notes.txt).
const TOOLS = `tools:
  - name: note
    description: Read the notes
    shell: 'echo "run $DELTA_RUN_ID in $(pwd) at $(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)"; cat notes.txt'
`;

function workspaceWithNotes(name: string, notes: string): string {
  const ws = join(root, name);
  mkdirSync(ws, { recursive: true });
  writeFileSync(join(ws, "notes.txt"), `${notes}\n`);
  return ws;
}

function thoughts(events: JournalEvent[]): EventOf<"THOUGHT">[] {
  return events.filter((event): event is EventOf<"THOUGHT"> => event.type === "THOUGHT");
}

/** A server that must not be asked: a request to it fails the run loudly. */
async function silentServer(): Promise<MockLlm> {
  return serve([]);
}

beforeAll(async () => {
  agent = writeAgent(root, { tools: TOOLS });
  // The recording: a live run of three model calls, two of them reading the notes.
  const server = await serve([
    reply.toolCalls([{ id: "call_a1", name: "note", arguments: {} }]),
    reply.toolCalls([{ id: "call_b2", name: "note", arguments: {} }], "Reading once more"),
    reply.text("The notes say v1"),
  ]);
  const ws = workspaceWithNotes("ws-recorded", "v1");
  const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "recorded-run", "Read the notes"], { env: modelEnv(server.baseUrl) });
  expect(result.exitCode, result.stderr).toBe(0);
  recorded = runDir(ws, "recorded-run");
});

describe("--replay <run folder> --until-divergence", () => {
  it("asks the model nothing when nothing changed: other run id, workspace and times are normalized away", async () => {
    const server = await silentServer();
    const ws = workspaceWithNotes("ws-same", "v1");
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "same-again", "--replay", recorded, "--until-divergence", "Read the notes", "--json"], { env: modelEnv(server.baseUrl) });
      expect(result.exitCode, result.stderr).toBe(0);
    expect(server.requests).toHaveLength(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: "COMPLETED", result: "The notes say v1" });
    const events = readEvents(ws, "same-again");
    expect(eventTypes(events)).not.toContain("REPLAY_DIVERGED");
    expect(events[0]).toMatchObject({ type: "ENGINE_START", config: { provider: "replay", replay: recorded, replay_check: "until-divergence" } });
    expect(thoughts(events).map((thought) => thought.tool_calls.map((call) => call.id))).toEqual([["call_a1"], ["call_b2"], []]);
  });

  it("plays the recording up to the first request that differs, journals where and why, and asks the model from there on", async () => {
    const server = await serve([reply.text("The notes now say v2")]);
    const ws = workspaceWithNotes("ws-changed", "v2");
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "changed", "--replay", recorded, "--until-divergence", "Read the notes", "--json"], { env: modelEnv(server.baseUrl) });
      expect(result.exitCode, result.stderr).toBe(0);
    // Call 1 was the recording's; call 2 saw notes "v2" where the recording saw "v1": it, and only it, went to the model.
    expect(server.requests).toHaveLength(1);
    expect(toolResultsOf(server.requests[0]!).at(-1)).toMatch(/^run changed in .*ws-changed at .*\nv2\n$/);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: "COMPLETED", result: "The notes now say v2" });
    const events = readEvents(ws, "changed");
    expect(eventTypes(events)).toEqual(["ENGINE_START", "USER_MESSAGE", "THOUGHT", "ACTION_REQUEST", "ACTION_RESULT", "REPLAY_DIVERGED", "THOUGHT", "ENGINE_END"]);
    expect(events[5]).toMatchObject({ type: "REPLAY_DIVERGED", iteration: 2, recorded_call: 2, source: recorded, parts: [{ part: "messages", summary: "message 4 (tool) changed" }], then: "live" });
    expect(thoughts(events)[0]!.tool_calls[0]!.id).toBe("call_a1");
    expect(result.stderr).toContain("[2] replay: the request of iteration 2 differs from the recording's call 2 (message 4 (tool) changed); the model is asked from here on (--until-divergence)");
  });

  it("needs a key, since it may go live, and says --replay-strict checks without one", async () => {
    const ws = workspaceWithNotes("ws-keyless", "v1");
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "keyless", "--replay", recorded, "--until-divergence", "Read the notes"]);
    expect(result.exitCode).toBe(126);
    expect(result.stderr).toContain("--until-divergence asks the model from the first request that differs from the recording, so it needs a key");
    expect(result.stderr).toContain("use --replay-strict");
    expect(existsSync(runDir(ws, "keyless"))).toBe(false);
  });
});

describe("--replay <run folder> --replay-strict", () => {
  it("ends FAILED with REPLAY_DIVERGED at the first request that differs, with no model called though a key is there", async () => {
    const server = await silentServer();
    const ws = workspaceWithNotes("ws-strict", "v2");
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "strict", "--replay", recorded, "--replay-strict", "Read the notes", "--json"], { env: modelEnv(server.baseUrl) });
      expect(result.exitCode).toBe(1);
    expect(server.requests).toHaveLength(0);
    const outcome = JSON.parse(result.stdout);
    expect(outcome).toMatchObject({ status: "FAILED", error: { type: "REPLAY_DIVERGED" } });
    expect(outcome.error.message).toContain("The request of model call 2 differs from the recording (message 4 (tool) changed); --replay-strict stops here, with no model called");
    const events = readEvents(ws, "strict");
    expect(eventTypes(events)).toEqual(["ENGINE_START", "USER_MESSAGE", "THOUGHT", "ACTION_REQUEST", "ACTION_RESULT", "REPLAY_DIVERGED", "ERROR", "ENGINE_END"]);
    expect(events[5]).toMatchObject({ iteration: 2, recorded_call: 2, then: "stopped" });
    expect(events[7]).toMatchObject({ status: "FAILED" });
  });

  it("passes, needing no key, when the agent and its inputs are what the recording saw", async () => {
    const ws = workspaceWithNotes("ws-strict-same", "v1");
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "strict-same", "--replay", recorded, "--replay-strict", "Read the notes"]);
    expect(result.exitCode, result.stderr).toBe(0);
  });
});

describe("a recording of replies only", () => {
  it.each(["--until-divergence", "--replay-strict"])("is refused for %s, naming how to record a run folder", async (flag) => {
    const replies = join(root, "replies.jsonl");
    writeFileSync(replies, `${JSON.stringify({ content: "done" })}\n`);
    const ws = join(root, `ws-replies${flag}`);
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "replies", "--replay", replies, flag, "Read the notes"], { env: modelEnv("http://127.0.0.1:9/v1") });
    expect(result.exitCode).toBe(126);
    expect(result.stderr).toContain(`${flag} compares each request with the one the recording sent, and ${replies} holds replies only. Record a run folder instead`);
    expect(result.stderr).toContain("<workspace>/.delta/<run-id>");
    expect(existsSync(runDir(ws, "replies"))).toBe(false);
  });

  it("is not needed for a plain --replay, and either flag without --replay is refused", async () => {
    const result = await delta(["run", "--agent", agent, "-w", join(root, "ws-no-replay"), "--replay-strict", "Read the notes"]);
    expect(result.exitCode).toBe(126);
    expect(result.stderr).toContain("--replay-strict checks each request against a recorded run: give that run's folder with --replay");
  });
});
