// Tool calls and their keys, offline: DELTA_ACTION_ID and DELTA_IDEMPOTENCY_KEY for a tool, the hooks about its call and an MCP server's _meta; the same key when `continue` runs an idempotent call a crash left in doubt, and the in-doubt observation for any other.
import { describe, expect, it } from "vitest";
import type { LlmReply } from "../../src/conversation.js";
import type { HookCallEnv } from "../../src/hooks/run-hook.js";
import { toolCatalogue } from "../../src/loop/tool-catalogue.js";
import type { InvokeResult } from "../../src/tools/invoke.js";
import { expandTool, type ExpandedTool } from "../../src/tools/expand.js";
import type { McpTool } from "../../src/tools/mcp/advertise.js";
import type { McpServers } from "../../src/tools/mcp/servers.js";
import { scriptedRun, text, type ScriptedRun } from "./scripted-loop.js";

/** `charge ${order}`, as an agent would declare a tool that calls a payment API; `idempotent` when it uses the key. */
function chargeTool(effects?: "idempotent"): ExpandedTool {
  return expandTool({ name: "charge", exec: "charge ${order}", ...(effects ? { effects } : {}) }, { file: "agent.yaml", path: "tools[0]" });
}

const MCP_TOOL: McpTool = { name: "shop__refund", server: "shop", tool: "refund", description: "Refund an order", inputSchema: { type: "object", properties: {} } };

/** A reply calling tools with the ids a provider chose. */
function callsWithIds(...toolCalls: [id: string, name: string, args: string][]): LlmReply {
  return { content: null, tool_calls: toolCalls.map(([id, name, args]) => ({ id, name, arguments: args })), usage: { input_tokens: 10, output_tokens: 2 }, model: "scripted", finish_reason: "tool_calls" };
}

interface Observed {
  /** The call-identity variables each tool process was given, in order. */
  tools: Record<string, string>[];
  /** The call-identity variables each hook was given, by hook point. */
  hooks: { name: string; env: HookCallEnv | undefined }[];
  /** The `_meta` each MCP call carried. */
  mcp: (Record<string, string> | undefined)[];
}

/** The run's tools are `tools` (and the MCP tool `shop__refund`, when given); everything a call is told is observed. A tool process given `die` throws, as an engine killed mid-call never records a result. */
function observe(run: ScriptedRun, tools: ExpandedTool[], options: { mcp?: McpTool; die?: () => boolean } = {}): Observed {
  const seen: Observed = { tools: [], hooks: [], mcp: [] };
  const mcp: Pick<McpServers, "tools" | "call"> | null = options.mcp
    ? {
        tools: [options.mcp],
        call: async (_tool, _args, call) => {
          seen.mcp.push(call?.meta);
          if (options.die?.()) throw new Error("the engine was killed while the server worked");
          return { kind: "result", result: { content: [{ type: "text", text: "refunded" }] }, durationMs: 1 };
        },
      }
    : null;
  run.ports.tools = toolCatalogue(tools, mcp, []);
  run.ports.processes = {
    prepare: async () => ({
      policy: null,
      run: async ({ argv, env }) => {
        seen.tools.push(env);
        if (options.die?.()) throw new Error("the engine was killed while the tool ran");
        return { result: succeeded(argv.join(" ")), refused: [] };
      },
    }),
  };
  const hook = run.ports.hook;
  run.ports.hook = (name, iteration, payload, env) => {
    seen.hooks.push({ name, env: env && { DELTA_ACTION_ID: env.DELTA_ACTION_ID, DELTA_IDEMPOTENCY_KEY: env.DELTA_IDEMPOTENCY_KEY } });
    return hook(name, iteration, payload, env);
  };
  return seen;
}

function succeeded(stdout: string): InvokeResult {
  return { exitCode: 0, signal: null, timedOut: false, aborted: false, overLimit: false, outputLeftOpen: false, spawnError: null, durationMs: 1, stdout, stderr: "", observation: stdout, status: "SUCCESS" };
}

describe("every tool call's key", () => {
  it("is <run_id>:<iteration>:<action_id>, told to the tool as DELTA_ACTION_ID and DELTA_IDEMPOTENCY_KEY; an id reused in a later iteration gets another key", async () => {
    const run = scriptedRun({ turns: [callsWithIds(["0", "charge", '{"order":"A"}']), callsWithIds(["0", "charge", '{"order":"B"}']), text("charged")] });
    const seen = observe(run, [chargeTool()]);
    expect(await run.run()).toEqual({ status: "COMPLETED", result: "charged" });
    expect(seen.tools).toEqual([
      { DELTA_ACTION_ID: "0", DELTA_IDEMPOTENCY_KEY: "run-1:1:0" },
      { DELTA_ACTION_ID: "0", DELTA_IDEMPOTENCY_KEY: "run-1:2:0" },
    ]);
  });

  it("tells apart two calls of one reply that share an id: the second's key ends #2", async () => {
    const run = scriptedRun({ turns: [callsWithIds(["dup", "charge", '{"order":"A"}'], ["dup", "charge", '{"order":"B"}']), text("ok")] });
    const seen = observe(run, [chargeTool()]);
    await run.run();
    expect(seen.tools.map((env) => env.DELTA_IDEMPOTENCY_KEY)).toEqual(["run-1:1:dup", "run-1:1:dup#2"]);
  });

  it("is told to the hooks about the call (pre_tool_execution, post_tool_execution, on_error) and to no other", async () => {
    const run = scriptedRun({ turns: [callsWithIds(["call_7", "charge", '{"order":"A"}'], ["call_8", "nope", "{}"]), text("ok")] });
    const seen = observe(run, [chargeTool()]);
    await run.run();
    const about = (id: string) => ({ DELTA_ACTION_ID: id, DELTA_IDEMPOTENCY_KEY: `run-1:1:${id}` });
    expect(seen.hooks.filter((hook) => hook.env?.DELTA_ACTION_ID !== undefined)).toEqual([
      { name: "pre_tool_execution", env: about("call_7") },
      { name: "post_tool_execution", env: about("call_7") },
      { name: "pre_tool_execution", env: about("call_8") },
      { name: "post_tool_execution", env: about("call_8") },
      { name: "on_error", env: about("call_8") },
    ]);
    expect(seen.hooks.filter((hook) => hook.env?.DELTA_ACTION_ID === undefined).map((hook) => hook.name)).toEqual(["on_iteration_start", "pre_llm_request", "post_llm_response", "on_iteration_end", "on_iteration_start", "pre_llm_request", "post_llm_response", "on_iteration_end"]);
  });

  it("goes to an MCP server in the tools/call request's _meta", async () => {
    const run = scriptedRun({ turns: [callsWithIds(["toolu_01", "shop__refund", '{"order":"A"}']), text("ok")] });
    const seen = observe(run, [], { mcp: MCP_TOOL });
    await run.run();
    expect(seen.mcp).toEqual([{ "delta/idempotency_key": "run-1:1:toolu_01", "delta/action_id": "toolu_01" }]);
  });

  it("a call id no environment can carry (a control character, or over 256 characters) is refused before anything runs", async () => {
    const run = scriptedRun({ turns: [callsWithIds(["bad\u0000id", "charge", '{"order":"A"}'], ["x".repeat(257), "charge", '{"order":"B"}']), text("ok")] });
    const seen = observe(run, [chargeTool()]);
    await run.run();
    expect(seen.tools).toEqual([]);
    expect(run.of("ACTION_RESULT").map((result) => [result.status, result.observation_content])).toEqual([
      ["ERROR", expect.stringMatching(/cannot run: its call id .* holds a control character/)],
      ["ERROR", expect.stringMatching(/cannot run: its call id is 257 characters long/)],
    ]);
  });
});

describe("a call a crash left in doubt", () => {
  /** A run whose engine dies while its one call runs (nothing records the result), then is continued. */
  async function crashThenContinue(tools: ExpandedTool[], options: { mcp?: McpTool } = {}): Promise<{ run: ScriptedRun; seen: Observed }> {
    const name = options.mcp ? options.mcp.name : "charge";
    const run = scriptedRun({ turns: [callsWithIds(["call_1", name, '{"order":"A"}']), text("charged once")] });
    let alive = false;
    const seen = observe(run, tools, { ...options, die: () => !alive });
    await expect(run.run()).rejects.toThrow(/engine was killed/);
    expect(run.of("ACTION_REQUEST")).toHaveLength(1);
    expect(run.of("ACTION_RESULT")).toHaveLength(0);
    alive = true;
    expect(await run.run()).toEqual({ status: "COMPLETED", result: "charged once" });
    return { run, seen };
  }

  it("of a tool declared effects: idempotent runs again with the same key, its request naming the one it repeats", async () => {
    const { run, seen } = await crashThenContinue([chargeTool("idempotent")]);
    expect(seen.tools).toEqual([
      { DELTA_ACTION_ID: "call_1", DELTA_IDEMPOTENCY_KEY: "run-1:1:call_1" },
      { DELTA_ACTION_ID: "call_1", DELTA_IDEMPOTENCY_KEY: "run-1:1:call_1" },
    ]);
    const [first, again] = run.of("ACTION_REQUEST");
    expect(first!.rerun_of).toBeUndefined();
    expect(again).toMatchObject({ action_id: "call_1", rerun_of: first!.seq, resolved_command: ["charge", "A"] });
    expect(run.of("ACTION_RESULT")).toMatchObject([{ action_id: "call_1", status: "SUCCESS", observation_content: "charge A" }]);
    // The model sees one call and its one result.
    const toolMessages = run.requests[1]!.messages.filter((message) => message.role === "tool");
    expect(toolMessages).toEqual([{ role: "tool", tool_call_id: "call_1", content: "charge A" }]);
  });

  it("of any other tool is never run again: the model is told it may or may not have taken effect", async () => {
    const { run, seen } = await crashThenContinue([chargeTool()]);
    expect(seen.tools).toHaveLength(1);
    expect(run.of("ACTION_REQUEST")).toHaveLength(1);
    expect(run.of("ACTION_RESULT")).toMatchObject([{ status: "ERROR", observation_content: expect.stringMatching(/may or may not have taken effect/) }]);
  });

  it("of an MCP tool the agent declares idempotent runs again with the same _meta; one it does not declare is in doubt", async () => {
    const declared = await crashThenContinue([], { mcp: { ...MCP_TOOL, effects: "idempotent" } });
    const meta = { "delta/idempotency_key": "run-1:1:call_1", "delta/action_id": "call_1" };
    expect(declared.seen.mcp).toEqual([meta, meta]);
    expect(declared.run.of("ACTION_RESULT")).toMatchObject([{ status: "SUCCESS", observation_content: "refunded" }]);

    const undeclared = await crashThenContinue([], { mcp: MCP_TOOL });
    expect(undeclared.seen.mcp).toEqual([meta]);
    expect(undeclared.run.of("ACTION_RESULT")).toMatchObject([{ status: "ERROR", observation_content: expect.stringMatching(/may or may not have taken effect/) }]);
  });
});
