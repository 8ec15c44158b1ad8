// Replay reproduces a live run: same journal from the run directory and from an exported replies file; and it fails loudly when it cannot.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/journal/events.js";
import { exportReplies } from "../support/replay-export.js";
import { delta, eventTypes, modelEnv, readEvents, runDir, writeAgent, setUpE2e } from "../e2e/harness.js";
import { EXAMPLES } from "./helpers.js";
import { type MockLlm } from "../support/mock-llm.js";
import { recordingAsScript } from "./recording.js";

const TOOL_SYNTAX = join(EXAMPLES, "tool-syntax");
const HELLO = join(EXAMPLES, "hello-world");
const TASK = "Save two notes, echo a tricky text, count apples, list the notes, search a text";

/** What a replay must reproduce: each event without its timestamp, durations, and the engine start facts that name paths. */
function comparable(events: JournalEvent[]): unknown[] {
  return events.map((event) => {
    switch (event.type) {
      case "ENGINE_START":
        return { type: event.type };
      case "ENGINE_END":
        return { type: event.type, status: event.status, final_iteration: event.final_iteration };
      case "THOUGHT":
        return { type: event.type, iteration: event.iteration, content: event.content, tool_calls: event.tool_calls };
      case "ACTION_REQUEST":
        return { type: event.type, iteration: event.iteration, action_id: event.action_id, tool_name: event.tool_name, tool_args: event.tool_args };
      case "ACTION_RESULT":
        return { type: event.type, action_id: event.action_id, status: event.status, observation_content: event.observation_content, exit_code: event.exit_code };
      default:
        return { type: event.type };
    }
  });
}

const { root, serve } = setUpE2e("delta-replay-fidelity-");
let server: MockLlm;
beforeAll(async () => {
  server = await serve(recordingAsScript(join(TOOL_SYNTAX, "recording.jsonl")));
});

describe.concurrent("replay", () => {
  it("replays a live run from its io/invocations/ and from exported replies with the same journal", async () => {
    const live = join(root, "live");
    const first = await delta(["run", "--agent", TOOL_SYNTAX, "-w", live, "--run-id", "live", "--format", "json", "-m", TASK], { env: modelEnv(server.baseUrl) });
    expect(first.exitCode, first.stderr).toBe(0);
    expect(server.requests).toHaveLength(6);
    const liveEvents = readEvents(live, "live");

    const exported = join(root, "exported.jsonl");
    writeFileSync(exported, exportReplies(runDir(live, "live")));
    // The example's recording round-trips: exporting the live run gives it back (usage aside, which the server derives).
    const withoutUsage = (text: string) => text.split("\n").filter((line) => line !== "").map((line) => ({ ...JSON.parse(line), usage: null }));
    expect(withoutUsage(readFileSync(exported, "utf8"))).toEqual(withoutUsage(readFileSync(join(TOOL_SYNTAX, "recording.jsonl"), "utf8")));
    const sources = { fromDir: runDir(live, "live"), fromFile: exported };
    const replays = await Promise.all(
      Object.entries(sources).map(async ([name, source]) => {
        const ws = join(root, name);
        const run = await delta(["run", "--agent", TOOL_SYNTAX, "-w", ws, "--run-id", name, "--format", "json", "--replay", source, "-m", TASK]);
        expect(run.exitCode, run.stderr).toBe(0);
        expect(JSON.parse(run.stdout).result).toBe(JSON.parse(first.stdout).result);
        expect(readFileSync(join(ws, "notes.txt"), "utf8")).toBe(readFileSync(join(live, "notes.txt"), "utf8"));
        return readEvents(ws, name);
      }),
    );
    expect(server.requests).toHaveLength(6); // replays never called the model
    for (const events of replays) {
      expect(eventTypes(events)).toEqual(eventTypes(liveEvents));
      expect(comparable(events)).toEqual(comparable(liveEvents));
    }
    expect(eventTypes(liveEvents).filter((type) => type === "ACTION_RESULT")).toHaveLength(6);
  });

  it("fails with exit 1 and REPLAY_ERROR when the recording runs out", async () => {
    const short = join(root, "short.jsonl");
    writeFileSync(short, readFileSync(join(HELLO, "recording.jsonl"), "utf8").split("\n").slice(0, 2).join("\n"));
    const ws = join(root, "short");
    const run = await delta(["run", "--agent", HELLO, "-w", ws, "--run-id", "short", "--replay", short, "-m", "greet"]);
    expect(run.exitCode).toBe(1);
    const message = `No recorded reply for model call 3: recording exhausted after 2 replies (file ${short}).`;
    expect(run.stdout).toContain(`Error:      REPLAY_ERROR: ${message}`);
    const events = readEvents(ws, "short");
    expect(events.find((event) => event.type === "ERROR")).toMatchObject({ error_type: "REPLAY_ERROR", error_message: message });
    expect(events.at(-1)).toMatchObject({ type: "ENGINE_END", status: "FAILED" });
    // What the recording did cover really ran.
    expect(readFileSync(join(ws, "hello.txt"), "utf8")).toMatch(/^Hello, world!/);
  });

  it("fails with exit 1 and REPLAY_ERROR when a recorded call names a tool the agent no longer offers", async () => {
    const agentYaml = readFileSync(join(HELLO, "agent.yaml"), "utf8");
    const withoutShow = agentYaml.slice(0, agentYaml.indexOf("  # exec: runs `cat -- <path>`"));
    expect(withoutShow).toContain("name: write_file");
    expect(withoutShow).not.toContain("show_file");
    const agent = writeAgent(root, { agentYaml: withoutShow, systemPrompt: readFileSync(join(HELLO, "system_prompt.md"), "utf8") }, "hello-without-show");
    const ws = join(root, "renamed");
    const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "renamed", "--format", "json", "--replay", join(HELLO, "recording.jsonl"), "-m", "greet"]);
    expect(run.exitCode).toBe(1);
    const error = JSON.parse(run.stdout).error as { type: string; message: string };
    expect(error.type).toBe("REPLAY_ERROR");
    expect(error.message).toContain('calls the tool "show_file", which this agent does not offer (offered: write_file, ask_human); the recording no longer fits the agent.');
    expect(run.stderr).toContain(`REPLAY_ERROR: ${error.message}`);
    expect(eventTypes(readEvents(ws, "renamed"))).toEqual(["ENGINE_START", "USER_MESSAGE", "THOUGHT", "ACTION_REQUEST", "ACTION_RESULT", "ERROR", "ENGINE_END"]);
  });
});
