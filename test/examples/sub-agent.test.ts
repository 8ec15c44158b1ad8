// examples/sub-agent: the parent's tool runs `delta run … --format raw` on the child; its observation is the child's raw result.
import { mkdirSync, readFileSync, readdirSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { actionResults, delta, eventTypes, modelEnv, readEvents, setUpE2e } from "../e2e/harness.js";
import { EXAMPLES, binDir, pathWith } from "./helpers.js";
import { fault, reply, toolResultsOf, type MockLlm, type RecordedRequest, type Step } from "../support/mock-llm.js";

const AGENT = join(EXAMPLES, "sub-agent");
const TEXT = "Delta engines journal everything";

/** Parent and child share one scripted server; a request is the child's when it offers the child's tools. */
function scriptFor(parent: Step[], child: Step[]): (request: RecordedRequest) => Step {
  return (request) => {
    const tools = (request.body as { tools?: { function: { name: string } }[] }).tools ?? [];
    const queue = tools.some((tool) => tool.function.name === "count_words") ? child : parent;
    return queue.shift() ?? reply.text("script exhausted");
  };
}

const { root, serve } = setUpE2e("delta-sub-agent-");
let server: MockLlm;
let env: Record<string, string>;
beforeAll(async () => {
  // `delta` on PATH, as after `npm install -g` or `npm link`.
  const bin = binDir(root);
  server = await serve(
    scriptFor(
      [
        reply.toolCalls([{ id: "call_parent_1", name: "ask_researcher", arguments: { task: `Measure this text: ${TEXT}` } }]),
        reply.text("The text has 4 words; the longest is 'everything'."),
      ],
      [
        reply.toolCalls([
          { id: "call_child_1", name: "count_words", arguments: { text: TEXT } },
          { id: "call_child_2", name: "longest_word", arguments: { text: TEXT } },
        ]),
        reply.text('{"words": 4, "longest_word": "everything"}'),
      ],
    ),
  );
  env = modelEnv(server.baseUrl, { PATH: pathWith(bin) });
});

// Unboxed here (--sandbox off), so these run on a machine without bubblewrap; test/hosts/sandbox-examples.test.ts runs it boxed.
describe.concurrent("examples/sub-agent", () => {
  it("runs without a key: the parent replays recording.jsonl, the child (a real delta run) replays RESEARCHER_REPLAY", async () => {
    const ws = join(root, "ws-replayed");
    const run = await delta(
      ["run", "--agent", AGENT, "--sandbox", "off", "-w", ws, "--run-id", "replayed", "--replay", join(AGENT, "recording.jsonl"), "--format", "json", "-m", `How many words are in: ${TEXT}`],
      { env: { PATH: pathWith(binDir(join(root, "replayed"))), RESEARCHER_REPLAY: join(AGENT, "researcher", "recording.jsonl") } },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: "COMPLETED", result: 'The text has 4 words; the longest is "everything".' });
    const [result] = actionResults(ws, "replayed");
    expect(result).toMatchObject({ tool_name: "ask_researcher", status: "SUCCESS", observation_content: '{\n  "words": 4,\n  "longest_word": "everything"\n}\n' });
    // The child's tools really ran on the text.
    const childWs = join(ws, "researcher-runs");
    const [childRun] = readdirSync(join(childWs, ".delta")).filter((name) => name !== "VERSION");
    expect(actionResults(childWs, childRun!).map((event) => event.observation_content.trim())).toEqual(["4", "everything"]);
  });

  it("a child that cannot start (delta on PATH but not there, as under a box's own /tmp) is a FAILED observation, exit 127; the replayed parent still completes, and the README's check finds no child run", async () => {
    // `delta` on PATH is a link to a place that is gone: what a box shows of a delta installed under the host's /tmp.
    const bin = join(root, "gone-bin");
    mkdirSync(bin);
    symlinkSync(join(root, "no-such-prefix", "delta"), join(bin, "delta"));
    const ws = join(root, "ws-child-gone");
    const run = await delta(
      ["run", "--agent", AGENT, "--sandbox", "off", "-w", ws, "--run-id", "gone", "--replay", join(AGENT, "recording.jsonl"), "--format", "json", `How many words are in: ${TEXT}`],
      { env: { PATH: [bin, dirname(process.execPath), "/usr/bin", "/bin"].join(":"), RESEARCHER_REPLAY: join(AGENT, "researcher", "recording.jsonl") } },
    );
    // The recording answers whatever the tool returned (README, "When the child cannot start").
    expect(run.exitCode, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: "COMPLETED" });
    const [result] = actionResults(ws, "gone");
    expect(result).toMatchObject({ tool_name: "ask_researcher", status: "FAILED", exit_code: 127 });
    expect(result!.observation_content).toMatch(/delta: not found/);
    // The README's way for a script to know the child ran: no id printed.
    const check = await delta(["list-runs", "-w", join(ws, "researcher-runs"), "--status", "COMPLETED", "--format", "raw"]);
    expect(check.stdout).toBe("");
    // No child ever started, so its folder is missing too: said, not listed as empty.
    expect(check.exitCode).toBe(126);
    expect(check.stderr).toContain("researcher-runs: no such directory");
  });

  it("a failing child becomes a FAILED observation with the child's exit code and error", async () => {
    const failing = await serve(
      scriptFor(
        [reply.toolCalls([{ id: "call_parent_1", name: "ask_researcher", arguments: { task: "Measure: x" } }]), reply.text("The researcher failed.")],
        [fault.status(400, { message: "model not found" })],
      ),
    );
    try {
      const ws = join(root, "ws-failing");
      const run = await delta(["run", "--agent", AGENT, "--sandbox", "off", "-w", ws, "--run-id", "parent", "-m", "Measure x"], { env: { ...env, DELTA_BASE_URL: failing.baseUrl } });
      expect(run.exitCode, run.stderr).toBe(0);
      const [result] = actionResults(ws, "parent");
      expect(result).toMatchObject({ tool_name: "ask_researcher", status: "FAILED", exit_code: 1 });
      expect(result?.observation_content).toMatch(/model not found/);
    } finally {
      await failing.close();
    }
  });

  it("the parent's observation is exactly what the child printed with --format raw", async () => {
    const ws = join(root, "ws");
    const run = await delta(["run", "--agent", AGENT, "--sandbox", "off", "-w", ws, "--run-id", "parent", "--format", "json", "-m", "How long is this text? " + TEXT], { env });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: "COMPLETED", result: "The text has 4 words; the longest is 'everything'." });

    // The child ran for real: its own run in the parent's workspace, its tools measuring the text.
    const childWs = join(ws, "researcher-runs");
    const childRuns = readdirSync(join(childWs, ".delta")).filter((name) => name !== "VERSION");
    expect(childRuns).toHaveLength(1);
    const child = readEvents(childWs, childRuns[0]!);
    expect(child.at(-1)).toMatchObject({ type: "ENGINE_END", status: "COMPLETED" });
    // The child called the same loopback server (its base URL passed on by env_passthrough), not a default endpoint.
    expect(child[0]).toMatchObject({ type: "ENGINE_START", config: { endpoint: { base_url: server.baseUrl } } });
    const childRequests = server.requests.filter((request) => JSON.stringify(request.body).includes("count_words"));
    expect(childRequests.length).toBeGreaterThanOrEqual(2);
    expect(child.flatMap((event) => (event.type === "ACTION_RESULT" ? [event.observation_content.trim()] : []))).toEqual(["4", "everything"]);

    const parent = readEvents(ws, "parent");
    expect(eventTypes(parent)).toEqual(["ENGINE_START", "USER_MESSAGE", "THOUGHT", "ACTION_REQUEST", "ACTION_RESULT", "THOUGHT", "ENGINE_END"]);
    const [result] = actionResults(ws, "parent");
    // --format raw prints a JSON result pretty-printed: what the child's final reply parses to.
    expect(result).toMatchObject({ tool_name: "ask_researcher", status: "SUCCESS", exit_code: 0, observation_content: '{\n  "words": 4,\n  "longest_word": "everything"\n}\n' });
    expect(readFileSync(join(ws, "researcher.stderr"), "utf8")).toContain("[1] ACT: count_words");

    // The parent's second request carried that observation to the model.
    const toolMessage = server.requests.flatMap(toolResultsOf).find((content) => content.includes('"words"'));
    expect(toolMessage).toBe(result?.observation_content);
  });
});
