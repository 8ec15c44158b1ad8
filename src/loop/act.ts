// ACT and OBSERVE: run one tool call the model asked for and record what came of it.
import type { EventOf, NewEvent, ToolCall } from "../journal/events.js";
import { boundTokens } from "../context/observation-tokens.js";
import { argumentsOverLimit } from "../tools/argument-limits.js";
import { bindToolCall } from "../tools/bind.js";
import type { ExpandedTool } from "../tools/expand.js";
import type { InvokeResult } from "../tools/invoke.js";
import { openQuestion, parseAskHumanArgs, recordAnswer } from "./ask-human.js";
import type { CatalogueEntry, InteractionRequest, LoopPorts, PreparedCall } from "./ports.js";
import { oneLine } from "./think.js";
import { callMcpTool, mcpCommand } from "./act-mcp.js";
import { errorMessage } from "../errors.js";
import { LOAD_SKILL } from "../context/skills-listing.js";
import { planSkillRead, readSkill } from "./load-skill.js";
import type { ActionFacts } from "./action-facts.js";
import { actionEnv, callIdProblem, type ActionKey } from "./action-key.js";

const DEFAULT_TOOL_TIMEOUT_MS = 120_000;

type ActOutcome = { kind: "done" } | { kind: "waiting"; request: InteractionRequest };

/** One tool call of a THOUGHT, as the loop runs it. */
interface PlannedCall {
  call: ToolCall;
  iteration: number;
  /** What the tool, and the hooks about the call, are told identifies it (action-key.ts). */
  key: ActionKey;
  /** Set when `continue` runs the call again: the seq of its ACTION_REQUEST whose result was never recorded. */
  rerunOf?: number;
}

/** Whether a call left in doubt by a crash may run again: a tool declared `effects: idempotent` (an exec tool, or an MCP server's tool as agent.yaml declares it), and load_skill, which only reads. */
export function rerunsSafely(entry: CatalogueEntry | undefined): boolean {
  switch (entry?.kind) {
    case "exec":
      return entry.tool.effects === "idempotent";
    case "mcp":
      return entry.tool.effects === "idempotent";
    case "load_skill":
      return true;
    case "ask_human":
    case undefined:
      return false;
    default: {
      const unknown: never = entry;
      throw new Error(`unknown catalogue entry ${JSON.stringify(unknown)}`);
    }
  }
}

export async function act(ports: LoopPorts, planned: PlannedCall): Promise<ActOutcome> {
  const { call, iteration } = planned;
  const unusableId = callIdProblem(call.id);
  if (unusableId !== null) {
    await refuse(ports, planned, parseArguments(call).value, `The call of '${call.name}' cannot run: ${unusableId}.`);
    return { kind: "done" };
  }
  const pre = await ports.hook("pre_tool_execution", iteration, call, { TOOL_NAME: call.name, ...hookEnv(planned) });
  if (pre.kind === "block") {
    await refuse(ports, planned, parseArguments(call).value, `Blocked by pre_tool_execution hook: ${pre.reason}`);
    return { kind: "done" };
  }

  const args = parseArguments(call);
  if (args.error !== null) {
    await refuse(ports, planned, args.value, args.error);
    return { kind: "done" };
  }
  const entry = ports.tools.find(call.name);
  if (entry === undefined) {
    const known = ports.tools.advertised.map((tool) => tool.function.name).join(", ");
    await refuse(ports, planned, args.value, `Unknown tool '${call.name}'. Available tools: ${known}.`);
    return { kind: "done" };
  }
  switch (entry.kind) {
    case "ask_human":
      return askHuman(ports, planned, args.value);
    case "load_skill":
      return loadSkill(ports, entry, planned, args.value);
    case "mcp":
      return actMcp(ports, entry, planned, args.value);
    case "exec":
      return actExec(ports, entry.tool, planned, args.value);
    default: {
      const unknown: never = entry;
      throw new Error(`unknown catalogue entry ${JSON.stringify(unknown)}`);
    }
  }
}

/** The call's identity for the hooks about it; none for a call id no environment can carry (that call is refused). */
function hookEnv(planned: PlannedCall): Partial<ReturnType<typeof actionEnv>> {
  return callIdProblem(planned.call.id) === null ? actionEnv(planned.key) : {};
}

async function actExec(ports: LoopPorts, tool: ExpandedTool, planned: PlannedCall, args: unknown): Promise<ActOutcome> {
  const { settings } = ports;
  const { call, iteration } = planned;
  const bound = bindToolCall(tool, args, { AGENT_HOME: settings.agentHome, CWD: settings.workDir });
  if (!bound.ok) {
    await refuse(ports, planned, args, bound.error);
    return { kind: "done" };
  }

  let prepared: PreparedCall;
  try {
    prepared = await ports.processes.prepare(tool.name);
  } catch (err) {
    await refuse(ports, planned, args, `[sandbox] the box of tool '${call.name}' could not be made (${errorMessage(err)}); fix its sandbox: in agent.yaml`);
    return { kind: "done" };
  }
  const request = requestAction(ports, planned, args, bound.argv);

  ports.log.activity({ kind: "tool", iteration, tool: call.name });
  const ran = await prepared.run({ argv: bound.argv, stdin: bound.stdin, timeoutMs: tool.timeout_ms ?? DEFAULT_TOOL_TIMEOUT_MS, requestSeq: request.seq, env: actionEnv(planned.key) });
  let result = ran.result;
  ports.log.activity({ kind: "idle" });
  const sandboxNote = prepared.policy === null ? null : sandboxCause(call.name, result, ran.refused, ran.refusedMore ?? 0);
  if (sandboxNote !== null) result = { ...result, observation: `${result.observation}\n${sandboxNote}` };
  ports.log.log(`tool ${call.name}: ${JSON.stringify(bound.argv)} → ${result.status}, exit ${result.exitCode ?? result.signal ?? "none"}${result.timedOut ? " (timed out)" : ""} in ${result.durationMs} ms`);
  // The result first: a full disk while the full output is recorded must not cost the run the tool's real result.
  const outputLines = lineCount(result.stdout) + lineCount(result.stderr);
  const recorded = await appendResult(ports, call, iteration, { status: result.status, observation: result.observation, exitCode: result.exitCode, durationMs: result.durationMs, outputLines });
  ports.records.toolExecution({
    iteration,
    action_id: call.id,
    tool_name: call.name,
    ...keyFacts(planned),
    tool_args: args,
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
    ...(prepared.policy === null ? {} : { sandbox: { policy: prepared.policy, refused_connections: ran.refused, ...(ran.refusedMore ? { refused_more: ran.refusedMore } : {}) } }),
  });
  await observed(ports, planned, recorded);
  return { kind: "done" };
}

/** What a tool execution's io record says of the call's identity. */
function keyFacts(planned: PlannedCall): Record<string, unknown> {
  return { idempotency_key: planned.key.key, ...(planned.rerunOf === undefined ? {} : { rerun_of: planned.rerunOf }) };
}

/** Refused targets the observation's note names; the rest are counted (the note stays small beside the bounded output). */
const REFUSED_NAMED = 5;

/**
 * The one line a boxed call's observation gains when the engine knows the box stopped something:
 * connections the proxy refused, or bwrap failing to make the box (its messages start with "bwrap: ").
 */
function sandboxCause(toolName: string, result: InvokeResult, refused: readonly string[], more: number): string | null {
  if (refused.length > 0) {
    const left = refused.length - REFUSED_NAMED + more;
    const named = left > 0 ? `${refused.slice(0, REFUSED_NAMED).join(", ")} and ${left} more (the call's record in io/tool_executions/ lists ${refused.length})` : refused.join(", ");
    return `[sandbox] the network proxy refused ${named}: not in the network list of tool '${toolName}'; add the host to its sandbox: network in agent.yaml if the tool needs it`;
  }
  const bwrapSaid = /^bwrap: .*/m.exec(result.stderr);
  if (result.exitCode === 1 && bwrapSaid !== null && result.stderr.startsWith("bwrap: ")) {
    return `[sandbox] the sandbox could not start tool '${toolName}' (${bwrapSaid[0]}); change its sandbox: in agent.yaml (write:, deny_read:) or run with --sandbox off`;
  }
  return null;
}

/** An MCP call is journaled as any tool's: requested and flushed before the server hears of it, its result after. */
async function actMcp(ports: LoopPorts, entry: Extract<CatalogueEntry, { kind: "mcp" }>, planned: PlannedCall, args: unknown): Promise<ActOutcome> {
  const { call, iteration } = planned;
  if (args !== null && args !== undefined && (typeof args !== "object" || Array.isArray(args))) {
    await refuse(ports, planned, args, `Arguments for '${call.name}' must be a JSON object.`);
    return { kind: "done" };
  }
  const given = (args ?? {}) as Record<string, unknown>;
  requestAction(ports, planned, given, mcpCommand(entry.tool));
  ports.log.activity({ kind: "tool", iteration, tool: call.name });
  const { facts, record } = await callMcpTool(ports, call, entry, given, planned.key);
  ports.log.activity({ kind: "idle" });
  const recorded = await appendResult(ports, call, iteration, facts);
  ports.records.toolExecution({ iteration, action_id: call.id, tool_name: call.name, ...keyFacts(planned), tool_args: given, ...record });
  await observed(ports, planned, recorded);
  return { kind: "done" };
}

/** load_skill is journaled as any tool's call: the file it will read is requested (and flushed) first, then read, bounded; nothing is run. */
async function loadSkill(ports: LoopPorts, entry: Extract<CatalogueEntry, { kind: "load_skill" }>, planned: PlannedCall, args: unknown): Promise<ActOutcome> {
  const { call, iteration } = planned;
  const plan = planSkillRead(entry.skills, args);
  if (typeof plan === "string") {
    await refuse(ports, planned, args, plan);
    return { kind: "done" };
  }
  const command = [LOAD_SKILL, plan.path];
  requestAction(ports, planned, args, command);
  const started = Date.now();
  const read = readSkill(plan);
  const facts: ActionFacts = { status: read.ok ? "SUCCESS" : "ERROR", observation: read.ok ? read.text : read.problem, exitCode: null, durationMs: Date.now() - started };
  ports.log.log(`tool ${call.name}: ${plan.path} → ${facts.status}${read.ok ? `, ${read.text.length} chars` : ""}`);
  const recorded = await appendResult(ports, call, iteration, facts);
  ports.records.toolExecution({ iteration, action_id: call.id, tool_name: call.name, ...keyFacts(planned), tool_args: args, command, duration_ms: facts.durationMs, ...(read.ok ? { content: read.text } : { error: read.problem }) });
  await observed(ports, planned, recorded);
  return { kind: "done" };
}

/** ACTION_REQUEST, flushed to disk before the tool runs: after a crash, the call is known to have maybe run. */
function requestAction(ports: LoopPorts, planned: PlannedCall, args: unknown, command: string[]): EventOf<"ACTION_REQUEST"> {
  const request = ports.journal.append(requestEvent(planned, args, command));
  ports.journal.sync();
  actLine(ports, planned, args);
  return request;
}

function requestEvent(planned: PlannedCall, args: unknown, command: string[] | null): Extract<NewEvent, { type: "ACTION_REQUEST" }> {
  const { call, iteration, rerunOf } = planned;
  return { type: "ACTION_REQUEST", iteration, action_id: call.id, tool_name: call.name, tool_args: args, resolved_command: command, ...(rerunOf === undefined ? {} : { rerun_of: rerunOf }) };
}

/** The ACT line of the live stream: every call the model asked for gets one, a call refused before it ran included. */
function actLine(ports: LoopPorts, planned: PlannedCall, args: unknown): void {
  const { call, iteration, rerunOf } = planned;
  ports.log.progress(`[${iteration}] ACT: ${call.name} ${oneLine(typeof args === "string" ? args : JSON.stringify(args) ?? "", 160)}${rerunOf === undefined ? "" : " (run again)"}`);
}

function lineCount(text: string): number {
  return text === "" ? 0 : text.replace(/\n$/, "").split("\n").length;
}

/** ACTION_RESULT, its observation bounded in tokens when a token limit applies (the whole output goes to io/tool_executions/). */
async function appendResult(ports: LoopPorts, call: ToolCall, iteration: number, facts: ActionFacts): Promise<EventOf<"ACTION_RESULT">> {
  const { observationTokens, model } = ports.settings.budget;
  const observation = observationTokens === null ? facts.observation : await boundTokens(facts.observation, observationTokens, model);
  if (observation !== facts.observation) ports.log.log(`tool ${call.name}: output cut to ${observationTokens} tokens for the context; the whole output is in io/tool_executions/`);
  return ports.journal.append({
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
async function observed(ports: LoopPorts, planned: PlannedCall, recorded: EventOf<"ACTION_RESULT">): Promise<void> {
  ports.log.progress(`[${planned.iteration}] OBSERVE: ${recorded.status} ${oneLine(recorded.observation_content, 160)}`);
  await afterTool(ports, planned, recorded);
}

/** A call that cannot run still gets a request and a result, so the model learns why, and the hooks that follow a result. */
async function refuse(ports: LoopPorts, planned: PlannedCall, toolArgs: unknown, reason: string): Promise<void> {
  const { call, iteration } = planned;
  ports.journal.append(requestEvent(planned, toolArgs, null));
  actLine(ports, planned, toolArgs);
  const recorded = ports.journal.append({
    type: "ACTION_RESULT",
    iteration,
    action_id: call.id,
    tool_name: call.name,
    status: "ERROR",
    observation_content: reason,
    exit_code: null,
    duration_ms: 0,
  });
  ports.log.progress(`[${iteration}] OBSERVE: ERROR ${oneLine(reason, 200)}`);
  await afterTool(ports, planned, recorded);
}

async function afterTool(ports: LoopPorts, planned: PlannedCall, result: EventOf<"ACTION_RESULT">): Promise<void> {
  const { iteration } = planned;
  await ports.hook("post_tool_execution", iteration, result, { TOOL_NAME: result.tool_name, TOOL_RESULT: result.observation_content, ...hookEnv(planned) });
  if (result.status !== "SUCCESS") {
    await ports.hook("on_error", iteration, result, { TOOL_NAME: result.tool_name, ERROR_MESSAGE: result.observation_content, ...hookEnv(planned) });
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

async function askHuman(ports: LoopPorts, planned: PlannedCall, args: unknown): Promise<ActOutcome> {
  const { call, iteration } = planned;
  const question = parseAskHumanArgs(args);
  if (typeof question === "string") {
    await refuse(ports, planned, args, question);
    return { kind: "done" };
  }
  const startedAt = Date.now();
  ports.journal.append(requestEvent(planned, args, null));
  actLine(ports, planned, args);
  const request = openQuestion(ports, call, iteration, question);
  if (ports.human.askInteractively) {
    const answer = await ports.human.askInteractively(question);
    recordAnswer(ports.journal, { iteration, action_id: call.id, request_id: request.request_id }, answer, startedAt);
    return { kind: "done" };
  }
  // Synced (and still this process's run) before the question is shown to anyone.
  ports.journal.sync();
  ports.human.publish(request);
  return { kind: "waiting", request };
}

