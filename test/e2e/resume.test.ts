// End to end: kill -9 and continue, the janitor, SIGINT, ask_human both ways, and the state table.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { readJournal } from "../support/journal-read.js";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

import { reply, type MockLlm } from "../support/mock-llm.js";
import { pauseGate } from "../support/pause-points.js";
import { delta, eventTypes, modelEnv, readEvents, readMetadataFile, runDir, spawnDelta, waitFor, writeAgent, setUpE2e } from "./harness.js";

const { root, serve } = setUpE2e();
let server: MockLlm;


const SLOW_TOOLS = 'tools:\n  - name: slow\n    shell: "echo started >> progress.txt; sleep ${seconds}; echo finished >> progress.txt"\n';

function toolStarted(ws: string): boolean {
  return existsSync(join(ws, "progress.txt"));
}

describe("resume after kill -9", () => {
  it("continues a killed run: the janitor marks it INTERRUPTED, the cut tool gets a synthesized result and is not re-run", async () => {
    server = await serve([reply.toolCalls([{ name: "slow", arguments: { seconds: "30" } }])]);
    const agent = writeAgent(root, { tools: SLOW_TOOLS }, "agent-kill");
    const ws = join(root, "ws-kill");
    const child = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "k1", "-m", "go"], { env: modelEnv(server.baseUrl) });
    await waitFor(() => toolStarted(ws));
    child.kill("SIGKILL");
    await child;
    expect(readMetadataFile(ws, "k1").status).toBe("RUNNING");

    server.push(reply.text("recovered"));
    const resumed = await delta(["continue", "--run-id", "k1", "-w", ws, "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(resumed.stderr).toContain("[Janitor]");
    expect(resumed.exitCode).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: "COMPLETED", result: "recovered" });

    const events = readJournal(join(runDir(ws, "k1"), "journal.jsonl"));
    expect(eventTypes(events)).toEqual([
      "ENGINE_START", "USER_MESSAGE", "THOUGHT", "ACTION_REQUEST",
      "ERROR", "ENGINE_END",
      "ENGINE_START", "ACTION_RESULT", "THOUGHT", "ENGINE_END",
    ]);
    expect(events[4]).toMatchObject({ error_type: "ORPHANED_RUN" });
    expect(events[5]).toMatchObject({ status: "INTERRUPTED" });
    expect(events[7]).toMatchObject({ status: "ERROR", observation_content: expect.stringContaining("may or may not have taken effect") });
    expect(readFileSync(join(ws, "progress.txt"), "utf8")).toBe("started\n");
    const lastRequest = server.requests.at(-1)!.body as { messages: Array<{ role: string; content: string }> };
    expect(lastRequest.messages.find((m) => m.role === "tool")?.content).toContain("may or may not have taken effect");
  });

  it("refuses to continue while the original process is alive, and leaves the run untouched", async () => {
    server = await serve([reply.toolCalls([{ name: "slow", arguments: { seconds: "30" } }])]);
    const agent = writeAgent(root, { tools: SLOW_TOOLS }, "agent-live");
    const ws = join(root, "ws-live");
    const child = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "live", "-m", "go"], { env: modelEnv(server.baseUrl) });
    try {
      await waitFor(() => toolStarted(ws));
      const journalBefore = readFileSync(join(runDir(ws, "live"), "journal.jsonl"), "utf8");
      const refused = await delta(["continue", "--run-id", "live", "-w", ws, "--format", "json"], { env: modelEnv(server.baseUrl) });
      expect(refused.exitCode).toBe(126);
      expect(JSON.parse(refused.stdout).error.message).toMatch(/still active \(PID \d+\)/);
      expect(readFileSync(join(runDir(ws, "live"), "journal.jsonl"), "utf8")).toBe(journalBefore);
    } finally {
      child.kill("SIGKILL");
      await child;
    }
  });
});

describe("interrupting a run", () => {
  it("exits 130 on SIGINT with an INTERRUPTED, resumable run", async () => {
    server = await serve([reply.toolCalls([{ name: "slow", arguments: { seconds: "30" } }])]);
    const agent = writeAgent(root, { tools: SLOW_TOOLS }, "agent-int");
    const ws = join(root, "ws-int");
    const child = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "int", "-m", "go", "--format", "json"], { env: modelEnv(server.baseUrl) });
    await waitFor(() => toolStarted(ws));
    child.kill("SIGINT");
    const result = await child;
    expect(result.exitCode).toBe(130);
    expect(JSON.parse(String(result.stdout))).toMatchObject({ status: "INTERRUPTED" });
    expect(readMetadataFile(ws, "int").status).toBe("INTERRUPTED");
    const events = readEvents(ws, "int");
    expect(events.at(-1)).toMatchObject({ type: "ENGINE_END", status: "INTERRUPTED" });

    server.push(reply.text("resumed"));
    const resumed = await delta(["continue", "--run-id", "int", "-w", ws, "--format", "raw"], { env: modelEnv(server.baseUrl) });
    expect(resumed.exitCode).toBe(0);
    expect(resumed.stdout).toBe("resumed\n");
  });
});

describe("ask_human", () => {
  it("pauses with 101, then continue -m answers the question and the run completes", async () => {
    server = await serve([
      reply.toolCalls([{ name: "ask_human", arguments: { prompt: "Which color?", input_type: "text" } }]),
      reply.text("you chose blue"),
    ]);
    const agent = writeAgent(root, {}, "agent-ask");
    const ws = join(root, "ws-ask");
    const paused = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "ask", "-m", "go", "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(paused.exitCode).toBe(101);
    expect(JSON.parse(paused.stdout)).toMatchObject({ status: "WAITING_FOR_INPUT", interaction: { prompt: "Which color?", input_type: "text", sensitive: false } });
    expect(paused.stderr).toContain("interaction/response.txt");
    const request = JSON.parse(readFileSync(join(runDir(ws, "ask"), "interaction", "request.json"), "utf8"));
    expect(request.prompt).toBe("Which color?");
    expect(readMetadataFile(ws, "ask").status).toBe("WAITING_FOR_INPUT");

    const resumed = await delta(["continue", "--run-id", "ask", "-w", ws, "-m", "blue", "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(resumed.exitCode).toBe(0);
    expect(existsSync(join(runDir(ws, "ask"), "interaction", "request.json"))).toBe(false);
    const types = eventTypes(readEvents(ws, "ask"));
    expect(types).toContain("HUMAN_INPUT_REQUEST");
    expect(types.indexOf("HUMAN_INPUT_RECEIVED")).toBeLessThan(types.lastIndexOf("ACTION_RESULT"));
    const tool = (server.requests[1]!.body as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === "tool");
    expect(tool?.content).toBe("blue");
  });

  it("keeps an answer recorded just before a crash: on resume it becomes the question's result", async () => {
    server = await serve([reply.toolCalls([{ name: "ask_human", arguments: { prompt: "Which color?" } }]), reply.text("you chose green")]);
    const agent = writeAgent(root, {}, "agent-ask-crash");
    const ws = join(root, "ws-ask-crash");
    expect((await delta(["run", "--agent", agent, "-w", ws, "--run-id", "askc", "-m", "go"], { env: modelEnv(server.baseUrl) })).exitCode).toBe(101);
    // Killed between HUMAN_INPUT_RECEIVED and the ask_human ACTION_RESULT.
    const gate = pauseGate("journal-append:ACTION_RESULT", root);
    const answering = spawnDelta(["continue", "--run-id", "askc", "-w", ws, "-m", "green"], { env: modelEnv(server.baseUrl, gate.env) });
    await gate.reached();
    answering.kill("SIGKILL");
    await answering;
    expect(eventTypes(readEvents(ws, "askc")).at(-1)).toBe("HUMAN_INPUT_RECEIVED");

    const resumed = await delta(["continue", "--run-id", "askc", "-w", ws, "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(resumed.exitCode).toBe(0);
    const tool = (server.requests[1]!.body as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === "tool");
    expect(tool?.content).toBe("green");
    expect(readEvents(ws, "askc").filter((event) => event.type === "ACTION_RESULT")).toEqual([expect.objectContaining({ status: "SUCCESS", observation_content: "green" })]);
    expect(existsSync(join(runDir(ws, "askc"), "interaction", "request.json"))).toBe(false);
  });

  it("takes the answer from interaction/response.txt when continue has no -m", async () => {
    server = await serve([reply.toolCalls([{ name: "ask_human", arguments: { prompt: "Token?", input_type: "password" } }]), reply.text("thanks")]);
    const agent = writeAgent(root, {}, "agent-ask-file");
    const ws = join(root, "ws-ask-file");
    const paused = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "askf", "-m", "go", "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(JSON.parse(paused.stdout).interaction).toEqual({ prompt: "Token?", input_type: "password", sensitive: true });
    writeFileSync(join(runDir(ws, "askf"), "interaction", "response.txt"), "s3cret\n");
    const resumed = await delta(["continue", "--run-id", "askf", "-w", ws], { env: modelEnv(server.baseUrl) });
    expect(resumed.exitCode).toBe(0);
    expect(existsSync(join(runDir(ws, "askf"), "interaction", "response.txt"))).toBe(false);
    expect(readEvents(ws, "askf").find((event) => event.type === "HUMAN_INPUT_RECEIVED")).toMatchObject({ response: "s3cret" });
  });

  it("asks on the terminal with -i and reads the answer from stdin", async () => {
    server = await serve([reply.toolCalls([{ name: "ask_human", arguments: { prompt: "Proceed?", input_type: "confirmation" } }]), reply.text("proceeding")]);
    const agent = writeAgent(root, {}, "agent-ask-i");
    const ws = join(root, "ws-ask-i");
    const result = await delta(["run", "-i", "--agent", agent, "-w", ws, "--run-id", "aski", "-m", "go", "--format", "raw"], { env: modelEnv(server.baseUrl), input: "yes\n" });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe("proceeding\n");
    expect(result.stderr).toContain("Proceed?");
    expect(readEvents(ws, "aski").find((event) => event.type === "HUMAN_INPUT_RECEIVED")).toMatchObject({ response: "yes" });
    expect(existsSync(join(runDir(ws, "aski"), "interaction", "request.json"))).toBe(false);
  });
});

describe("the continue state table", () => {
  it("refuses each continuation the state does not allow, with 126 and the run untouched", async () => {
    server = await serve([reply.text("done"), reply.toolCalls([{ name: "ask_human", arguments: { prompt: "Q?" } }])]);
    const agent = writeAgent(root, {}, "agent-table");
    const ws = join(root, "ws-table");
    await delta(["run", "--agent", agent, "-w", ws, "--run-id", "done", "-m", "go"], { env: modelEnv(server.baseUrl) });
    await delta(["run", "--agent", agent, "-w", ws, "--run-id", "wait", "-m", "go"], { env: modelEnv(server.baseUrl) });
    const snapshot = (id: string) => readFileSync(join(runDir(ws, id), "journal.jsonl"), "utf8");
    const before = { done: snapshot("done"), wait: snapshot("wait") };

    const completedNoMessage = await delta(["continue", "--run-id", "done", "-w", ws], { env: modelEnv(server.baseUrl) });
    expect(completedNoMessage.exitCode).toBe(126);
    expect(completedNoMessage.stderr).toContain("Run is COMPLETED. To continue, provide a message using -m/--message");

    const waitingNoAnswer = await delta(["continue", "--run-id", "wait", "-w", ws], { env: modelEnv(server.baseUrl) });
    expect(waitingNoAnswer.exitCode).toBe(126);
    expect(waitingNoAnswer.stderr).toContain("WAITING_FOR_INPUT");

    const unknown = await delta(["continue", "--run-id", "nope", "-w", ws, "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(unknown.exitCode).toBe(126);
    expect(JSON.parse(unknown.stdout).error.message).toContain("nope");

    expect({ done: snapshot("done"), wait: snapshot("wait") }).toEqual(before);
    expect(server.requests).toHaveLength(2);
  });

  it("extends a COMPLETED run with a new message appended as USER_MESSAGE", async () => {
    server = await serve([reply.text("first answer"), reply.text("second answer")]);
    const agent = writeAgent(root, {}, "agent-extend");
    const ws = join(root, "ws-extend");
    await delta(["run", "--agent", agent, "-w", ws, "--run-id", "ext", "-m", "first"], { env: modelEnv(server.baseUrl) });
    const extended = await delta(["continue", "--run-id", "ext", "-w", ws, "-m", "second", "--format", "raw"], { env: modelEnv(server.baseUrl) });
    expect(extended.exitCode).toBe(0);
    expect(extended.stdout).toBe("second answer\n");
    const messages = (server.requests[1]!.body as { messages: Array<{ role: string; content: string }> }).messages;
    expect(messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["first", "second"]);
    expect(messages.find((m) => m.role === "assistant")?.content).toBe("first answer");
  });
});

describe("list-runs", () => {
  it("lists runs newest first with statuses from the journal, filters and raw ids", async () => {
    server = await serve([reply.text("a"), reply.toolCalls([{ name: "ask_human", arguments: { prompt: "?" } }])]);
    const agent = writeAgent(root, {}, "agent-list");
    const ws = join(root, "ws-list");
    await delta(["run", "--agent", agent, "-w", ws, "--run-id", "older", "-m", "first task"], { env: modelEnv(server.baseUrl) });
    await delta(["run", "--agent", agent, "-w", ws, "--run-id", "newer", "-m", "second task"], { env: modelEnv(server.baseUrl) });

    const raw = await delta(["list-runs", "-w", ws, "--format", "raw"]);
    expect(raw.stdout).toBe("newer\nolder\n");
    const json = JSON.parse((await delta(["list-runs", "-w", ws, "--format", "json"])).stdout);
    expect(json.map((run: { run_id: string; status: string }) => [run.run_id, run.status])).toEqual([["newer", "WAITING_FOR_INPUT"], ["older", "COMPLETED"]]);
    const waiting = await delta(["list-runs", "-w", ws, "--status", "waiting_for_input", "--format", "raw"]);
    expect(waiting.stdout).toBe("newer\n");
    const first = await delta(["list-runs", "-w", ws, "--resumable", "--first", "--format", "raw"]);
    expect(first.stdout).toBe("newer\n");
  });
});
