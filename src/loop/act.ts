// ACT and OBSERVE: run one tool call the model asked for and record what came of it.
import type { JournalEvent, ToolCall } from "../journal/events.js";
import { boundTokens } from "../context/observation-tokens.js";
import { argumentsOverLimit } from "../tools/argument-limits.js";
import { bindToolCall } from "../tools/bind.js";
import { invokeTool, type InvokeResult } from "../tools/invoke.js";
import type { McpTool } from "../tools/mcp/advertise.js";
import { ASK_HUMAN, openQuestion, parseAskHumanArgs, recordAnswer, writeInteractionRequest, type InteractionRequest } from "./ask-human.js";
import type { RunContext } from "../run/run-context.js";
import { oneLine } from "./think.js";
import { callMcpTool, mcpCommand } from "./act-mcp.js";
import type { OpenBox } from "../run/tool-box.js";
import { errorMessage } from "../errors.js";
import { LOAD_SKILL } from "../context/skills-listing.js";
import { planSkillRead, readSkill } from "./load-skill.js";
import type { ActionFacts } from "./action-facts.js";

const DEFAULT_TOOL_TIMEOUT_MS = 120_000;

type ActOutcome = { kind: "done" } | { kind: "waiting"; request: InteractionRequest };

export async function act(ctx: RunContext, call: ToolCall, iteration: number): Promise<ActOutcome> {
  const pre = await ctx.hook("pre_tool_execution", iteration, call, { TOOL_NAME: call.name });
  if (pre.kind === "block") {
    await refuse(ctx, call, iteration, parseArguments(call).value, `Blocked by pre_tool_execution hook: ${pre.reason}`);
    return { kind: "done" };
  }

  const args = parseArguments(call);
  if (args.error !== null) {
    await refuse(ctx, call, iteration, args.value, args.error);
    return { kind: "done" };
  }
  if (call.name === ASK_HUMAN) return askHuman(ctx, call, iteration, args.value);
  if (call.name === LOAD_SKILL && ctx.agent.skills.length > 0) return loadSkill(ctx, call, iteration, args.value);

  const mcpTool = ctx.mcp?.find(call.name);
  if (mcpTool) return actMcp(ctx, call, iteration, args.value, mcpTool);
  const tool = ctx.agent.tools.find((candidate) => candidate.name === call.name);
  if (!tool) {
    const builtIn = ctx.agent.skills.length > 0 ? [ASK_HUMAN, LOAD_SKILL] : [ASK_HUMAN];
    const known = [...ctx.agent.tools.map((t) => t.name), ...(ctx.mcp?.tools ?? []).map((t) => t.name), ...builtIn].join(", ");
    await refuse(ctx, call, iteration, args.value, `Unknown tool '${call.name}'. Available tools: ${known}.`);
    return { kind: "done" };
  }
  const bound = bindToolCall(tool, args.value, { AGENT_HOME: ctx.agent.home, CWD: ctx.workDir });
  if (!bound.ok) {
    await refuse(ctx, call, iteration, args.value, bound.error);
    return { kind: "done" };
  }

  let box: OpenBox | null;
  try {
    box = await ctx.openToolBox(tool.name);
  } catch (err) {
    await refuse(ctx, call, iteration, args.value, `[sandbox] the box of tool '${call.name}' could not be made (${errorMessage(err)}); fix its sandbox: in agent.yaml`);
    return { kind: "done" };
  }
  const request = requestAction(ctx, call, iteration, args.value, bound.argv);
  const traceParent = ctx.traceParentFor(request.seq);

  let result: InvokeResult;
  let refused: string[];
  ctx.activity({ kind: "tool", iteration, tool: call.name });
  try {
    result = await invokeTool({
      argv: bound.argv,
      stdin: bound.stdin,
      cwd: ctx.workDir,
      env: { DELTA_RUN_ID: ctx.runId, DELTA_AGENT_HOME: ctx.agent.home, DELTA_CWD: ctx.workDir, ...(traceParent === null ? {} : { TRACEPARENT: traceParent }) },
      baseEnv: box === null ? ctx.childEnv : box.env,
      timeoutMs: tool.timeout_ms ?? DEFAULT_TOOL_TIMEOUT_MS,
      signal: ctx.signal,
      // In the owner record before anything else happens: a `continue` after this engine is killed ends what is left of it.
      onSpawn: (pgid) => ctx.noteToolGroup({ request_seq: request.seq, pgid, started_at_unix: Date.now() }),
      sandbox: box?.box,
    });
  } finally {
    refused = box?.refused() ?? [];
    await box?.close();
  }
  ctx.noteToolGroup(null);
  ctx.activity({ kind: "idle" });
  const sandboxNote = box === null ? null : sandboxCause(call.name, result, refused);
  if (sandboxNote !== null) result = { ...result, observation: `${result.observation}\n${sandboxNote}` };
  ctx.log(`tool ${call.name}: ${JSON.stringify(bound.argv)} → ${result.status}, exit ${result.exitCode ?? result.signal ?? "none"}${result.timedOut ? " (timed out)" : ""} in ${result.durationMs} ms`);
  // The result first: a full disk while the full output is recorded must not cost the run the tool's real result.
  const outputLines = lineCount(result.stdout) + lineCount(result.stderr);
  const recorded = await appendResult(ctx, call, iteration, { status: result.status, observation: result.observation, exitCode: result.exitCode, durationMs: result.durationMs, outputLines });
  ctx.recordToolExecution({
    iteration,
    action_id: call.id,
    tool_name: call.name,
    tool_args: args.value,
    command: bound.argv,
    stdin: bound.stdin ?? null,
    exit_code: result.exitCode,
    signal: result.signal,
    timed_out: result.timedOut,
    aborted: result.aborted,
    spawn_error: result.spawnError,
    duration_ms: result.durationMs,
    stdout: result.stdout,
    stderr: result.stderr,
    ...(box === null ? {} : { sandbox: { policy: box.policy, refused_connections: refused } }),
  });
  await observed(ctx, iteration, recorded);
  return { kind: "done" };
}

/**
 * The one line a boxed call's observation gains when the engine knows the box stopped something:
 * connections the proxy refused, or bwrap failing to make the box (its messages start with "bwrap: ").
 */
function sandboxCause(toolName: string, result: InvokeResult, refused: readonly string[]): string | null {
  if (refused.length > 0) {
    return `[sandbox] the network proxy refused ${refused.join(", ")}: not in the network list of tool '${toolName}'; add the host to its sandbox: network in agent.yaml if the tool needs it`;
  }
  const bwrapSaid = /^bwrap: .*/m.exec(result.stderr);
  if (result.exitCode === 1 && bwrapSaid !== null && result.stderr.startsWith("bwrap: ")) {
    return `[sandbox] the sandbox could not start tool '${toolName}' (${bwrapSaid[0]}); change its sandbox: in agent.yaml (write:, deny_read:) or run with --sandbox off`;
  }
  return null;
}

/** An MCP call is journaled as any tool's: requested and flushed before the server hears of it, its result after. */
async function actMcp(ctx: RunContext, call: ToolCall, iteration: number, args: unknown, tool: McpTool): Promise<ActOutcome> {
  if (args !== null && args !== undefined && (typeof args !== "object" || Array.isArray(args))) {
    await refuse(ctx, call, iteration, args, `Arguments for '${call.name}' must be a JSON object.`);
    return { kind: "done" };
  }
  const given = (args ?? {}) as Record<string, unknown>;
  requestAction(ctx, call, iteration, given, mcpCommand(tool));
  ctx.activity({ kind: "tool", iteration, tool: call.name });
  const { facts, record } = await callMcpTool(ctx, call, tool, given);
  ctx.activity({ kind: "idle" });
  const recorded = await appendResult(ctx, call, iteration, facts);
  ctx.recordToolExecution({ iteration, action_id: call.id, tool_name: call.name, tool_args: given, ...record });
  await observed(ctx, iteration, recorded);
  return { kind: "done" };
}

/** load_skill is journaled as any tool's call: the file it will read is requested (and flushed) first, then read, bounded; nothing is run. */
async function loadSkill(ctx: RunContext, call: ToolCall, iteration: number, args: unknown): Promise<ActOutcome> {
  const plan = planSkillRead(ctx.agent.skills, args);
  if (typeof plan === "string") {
    await refuse(ctx, call, iteration, args, plan);
    return { kind: "done" };
  }
  const command = [LOAD_SKILL, plan.path];
  requestAction(ctx, call, iteration, args, command);
  const started = Date.now();
  const read = readSkill(plan);
  const facts: ActionFacts = { status: read.ok ? "SUCCESS" : "ERROR", observation: read.ok ? read.text : read.problem, exitCode: null, durationMs: Date.now() - started };
  ctx.log(`tool ${call.name}: ${plan.path} → ${facts.status}${read.ok ? `, ${read.text.length} chars` : ""}`);
  const recorded = await appendResult(ctx, call, iteration, facts);
  ctx.recordToolExecution({ iteration, action_id: call.id, tool_name: call.name, tool_args: args, command, duration_ms: facts.durationMs, ...(read.ok ? { content: read.text } : { error: read.problem }) });
  await observed(ctx, iteration, recorded);
  return { kind: "done" };
}

/** ACTION_REQUEST, flushed to disk before the tool runs: after a crash, the call is known to have maybe run. */
function requestAction(ctx: RunContext, call: ToolCall, iteration: number, args: unknown, command: string[]): JournalEvent {
  const request = ctx.append({ type: "ACTION_REQUEST", iteration, action_id: call.id, tool_name: call.name, tool_args: args, resolved_command: command });
  ctx.sync();
  ctx.progress(`[${iteration}] ACT: ${call.name} ${oneLine(JSON.stringify(args), 160)}`);
  return request;
}

function lineCount(text: string): number {
  return text === "" ? 0 : text.replace(/\n$/, "").split("\n").length;
}

/** ACTION_RESULT, its observation bounded in tokens when a token limit applies (the whole output goes to io/tool_executions/). */
async function appendResult(ctx: RunContext, call: ToolCall, iteration: number, facts: ActionFacts): Promise<JournalEvent> {
  const { observationTokens, model } = ctx.budget;
  const observation = observationTokens === null ? facts.observation : await boundTokens(facts.observation, observationTokens, model);
  if (observation !== facts.observation) ctx.log(`tool ${call.name}: output cut to ${observationTokens} tokens for the context; the whole output is in io/tool_executions/`);
  return ctx.append({
    type: "ACTION_RESULT",
    iteration,
    action_id: call.id,
    tool_name: call.name,
    status: facts.status,
    observation_content: observation,
    exit_code: facts.exitCode,
    duration_ms: facts.durationMs,
    // What `show` counts as the lines it does not print, when the observation was cut.
    ...(facts.outputLines !== undefined && facts.outputLines > lineCount(observation) ? { output_lines: facts.outputLines } : {}),
  });
}

/** The OBSERVE line and the hooks that follow a result. */
async function observed(ctx: RunContext, iteration: number, recorded: JournalEvent): Promise<void> {
  if (recorded.type === "ACTION_RESULT") ctx.progress(`[${iteration}] OBSERVE: ${recorded.status} ${oneLine(recorded.observation_content, 160)}`);
  await afterTool(ctx, iteration, recorded);
}

/** A call that cannot run still gets a request and a result, so the model learns why, and the hooks that follow a result. */
async function refuse(ctx: RunContext, call: ToolCall, iteration: number, toolArgs: unknown, reason: string): Promise<void> {
  ctx.append({ type: "ACTION_REQUEST", iteration, action_id: call.id, tool_name: call.name, tool_args: toolArgs, resolved_command: null });
  const recorded = ctx.append({
    type: "ACTION_RESULT",
    iteration,
    action_id: call.id,
    tool_name: call.name,
    status: "ERROR",
    observation_content: reason,
    exit_code: null,
    duration_ms: 0,
  });
  ctx.progress(`[${iteration}] OBSERVE: ERROR ${oneLine(reason, 200)}`);
  await afterTool(ctx, iteration, recorded);
}

async function afterTool(ctx: RunContext, iteration: number, result: ReturnType<RunContext["append"]>): Promise<void> {
  if (result.type !== "ACTION_RESULT") return;
  await ctx.hook("post_tool_execution", iteration, result, { TOOL_NAME: result.tool_name, TOOL_RESULT: result.observation_content });
  if (result.status !== "SUCCESS") {
    await ctx.hook("on_error", iteration, result, { TOOL_NAME: result.tool_name, ERROR_MESSAGE: result.observation_content });
  }
}

function parseArguments(call: ToolCall): { value: unknown; error: string | null } {
  const tooLarge = argumentsOverLimit(call.name, call.arguments);
  if (tooLarge !== null) return { value: null, error: tooLarge };
  const text = call.arguments.trim() === "" ? "{}" : call.arguments;
  try {
    return { value: JSON.parse(text), error: null };
  } catch (err) {
    return { value: call.arguments, error: `The arguments for '${call.name}' are not valid JSON (${(err as Error).message}). Send one JSON object.` };
  }
}

async function askHuman(ctx: RunContext, call: ToolCall, iteration: number, args: unknown): Promise<ActOutcome> {
  const question = parseAskHumanArgs(args);
  if (typeof question === "string") {
    await refuse(ctx, call, iteration, args, question);
    return { kind: "done" };
  }
  const startedAt = Date.now();
  ctx.append({ type: "ACTION_REQUEST", iteration, action_id: call.id, tool_name: ASK_HUMAN, tool_args: args, resolved_command: null });
  const request = openQuestion(ctx, call, iteration, question);
  if (ctx.askInteractively) {
    const answer = await ctx.askInteractively(question);
    recordAnswer(ctx, { iteration, action_id: call.id, request_id: request.request_id }, answer, startedAt);
    return { kind: "done" };
  }
  // Synced (and still this process's run) before the question is shown to anyone.
  ctx.sync();
  writeInteractionRequest(ctx.paths.interactionDir, request);
  return { kind: "waiting", request };
}

