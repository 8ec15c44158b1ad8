// Examples run boxed: the sub-agent's child engine reaches its model through the proxy, mcp-filesystem's npx server opts out, interactive-shell keeps its session.
import { cpSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execa } from "execa";
import { NO_MODEL_KEYS, actionResults, delta, listIo, modelEnv, readEvents, removeDir, tempDir } from "../e2e/harness.js";
import { EXAMPLES, binDir, pathWith } from "../examples/helpers.js";
import { reply, startMockLlm, type MockLlm, type RecordedRequest, type Step } from "../support/mock-llm.js";
import { requireBinary } from "../support/system-packages.js";

const TEXT = "Delta engines journal everything";

let root: string;
let server: MockLlm;
beforeAll(async () => {
  requireBinary("bwrap");
  root = tempDir("delta-sandbox-examples-");
  const parent: Step[] = [
    reply.toolCalls([{ id: "call_parent_1", name: "ask_researcher", arguments: { task: `Measure this text: ${TEXT}` } }]),
    reply.text("4 words."),
  ];
  const child: Step[] = [reply.toolCalls([{ id: "call_child_1", name: "count_words", arguments: { text: TEXT } }]), reply.text('{"words": 4}')];
  server = await startMockLlm((request: RecordedRequest) => {
    const tools = (request.body as { tools?: { function: { name: string } }[] }).tools ?? [];
    return (tools.some((tool) => tool.function.name === "count_words") ? child : parent).shift() ?? reply.text("script exhausted");
  });
});
afterAll(async () => {
  await server.close();
  removeDir(root);
});

describe("examples/sub-agent in its sandbox", () => {
  it("runs the child engine boxed: its runs land in the workspace, its model is reached through the proxy", async () => {
    // The example as shipped, with the model host of its network list pointed at the scripted model.
    const agent = join(root, "sub-agent");
    cpSync(join(EXAMPLES, "sub-agent"), agent, { recursive: true });
    const host = new URL(server.baseUrl).host;
    const yaml = readFileSync(join(agent, "agent.yaml"), "utf8");
    expect(yaml).toContain("network: [api.openai.com]");
    writeFileSync(join(agent, "agent.yaml"), yaml.replace("network: [api.openai.com]", `network: ["${host}"]`));
    // `delta` on PATH from a folder the box can see (its /tmp is private; the agent's folder is bound read-only).
    const bin = binDir(agent);
    const ws = join(root, "ws");
    const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "parent", "-m", `How long is: ${TEXT}`], { env: modelEnv(server.baseUrl, { PATH: pathWith(bin) }), timeoutMs: 90_000 });
    expect(run.exitCode, run.stderr).toBe(0);
    const [result] = actionResults(ws, "parent");
    expect(result, run.stderr).toMatchObject({ tool_name: "ask_researcher", status: "SUCCESS", observation_content: '{\n  "words": 4\n}\n' });
    const childWs = join(ws, "researcher-runs");
    const [childRun] = readdirSync(join(childWs, ".delta")).filter((name) => name !== "VERSION");
    expect(readEvents(childWs, childRun!).at(-1)).toMatchObject({ type: "ENGINE_END", status: "COMPLETED" });
    // The parent journaled the box its tool ran in.
    const start = readEvents(ws, "parent")[0]!;
    expect(start.type === "ENGINE_START" && start.config.sandbox).toMatchObject({ tools: { ask_researcher: { mode: "workspace-write", network: [host] } } });
  });
});

describe("examples/mcp-filesystem under --sandbox workspace-write", () => {
  it("boxes its exec tool and leaves its npx server unboxed, as the server's sandbox: {mode: off} says", async () => {
    // npx finds the server from the agent's folder up: this checkout's node_modules, offline.
    const ws = join(root, "mcp-ws");
    const run = await delta(
      ["run", "--agent", join(EXAMPLES, "mcp-filesystem"), "-w", ws, "--sandbox", "workspace-write", "--replay", join(EXAMPLES, "mcp-filesystem", "recording.jsonl"), "--run-id", "boxed", "-m", "Make a picnic checklist in lists/picnic.md and show me what is in lists/"],
      { env: { npm_config_offline: "true", HOME: join(root, "home") }, timeoutMs: 120_000 },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(actionResults(ws, "boxed").map((event) => event.status)).toEqual(["SUCCESS", "SUCCESS", "SUCCESS", "SUCCESS"]);
    const start = readEvents(ws, "boxed")[0]!;
    expect(start.type === "ENGINE_START" && start.config.sandbox).toMatchObject({ agent: null, mcp_servers: { files: { mode: "off" } }, override: "workspace-write" });
    const records = listIo(ws, "boxed", "tool_executions").map((name) => JSON.parse(readFileSync(join(ws, ".delta", "boxed", "io", "tool_executions", name), "utf8")) as { tool_name: string; sandbox?: { policy: { mode: string } } });
    expect(records.find((record) => record.tool_name === "count_lines")?.sandbox?.policy.mode).toBe("workspace-write");
    expect(records.filter((record) => record.tool_name.startsWith("files__")).every((record) => record.sandbox === undefined)).toBe(true);
  });
});

describe("examples/interactive-shell under --sandbox workspace-write", () => {
  it("keeps its delta-sessions session from one boxed call to the next", async () => {
    const ws = join(root, "shell-ws");
    // delta-sessions on PATH from a folder the box can see: its /tmp is private, the workspace is bound.
    const bin = binDir(join(ws, ".tools"));
    const result = await execa(
      process.execPath,
      [join(EXAMPLES, "interactive-shell/scripted-model.mjs"), "delta", "run", "--agent", join(EXAMPLES, "interactive-shell"), "-w", ws, "--run-id", "boxed", "--sandbox", "workspace-write", "--format", "json", "-m", "Create a folder demo, cd into it, write three files and report their sizes"],
      { env: { ...NO_MODEL_KEYS, PATH: pathWith(bin) }, reject: false, stdin: "ignore", timeout: 90_000 },
    );
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect((JSON.parse(String(result.stdout)) as { result: string }).result).toMatch(/ 4 a\.txt\n 8 b\.txt\n18 c\.txt/);
    expect(actionResults(ws, "boxed").map((action) => action.status)).toEqual(["SUCCESS", "SUCCESS", "SUCCESS", "SUCCESS"]);
  });
});
