// What the Think-Act-Observe loop needs from the run around it, one narrow port each: the journal, the model, the context, the tools, hooks, the log and the human.
import type { StructuredOutput } from "../agent/output-schema.js";
import type { BuiltContext, ContextEnv } from "../context/build.js";
import type { ContextBudget } from "../context/budget.js";
import type { HookCallEnv, HookOutcome } from "../hooks/run-hook.js";
import type { HookName } from "../hooks/schema.js";
import type { EventOf, NewEvent } from "../journal/events.js";
import type { BatchedCall, RunState } from "../journal/run-state.js";
import type { ShownJournal } from "../journal/shown-journal.js";
import type { LlmConfig } from "../llm/settings-schema.js";
import type { AttemptAdmission, Provider } from "../llm/types.js";
import type { InvokeResult } from "../tools/invoke.js";
import type { ActivitySink } from "./activity.js";
import type { Skill } from "../agent/skills/scan.js";
import type { FunctionTool, LlmReply, LlmRequest } from "../conversation.js";
import type { ExpandedTool } from "../tools/expand.js";
import type { McpTool } from "../tools/mcp/advertise.js";
import type { McpServers } from "../tools/mcp/servers.js";

export interface HumanQuestion {
  prompt: string;
  input_type: string;
  sensitive: boolean;
}

/** An open question as interaction/request.json shows it. */
export interface InteractionRequest extends HumanQuestion {
  request_id: string;
  timestamp: string;
  run_id: string;
  action_id: string;
}

/** What a call of a name runs. */
export type CatalogueEntry =
  | { kind: "exec"; tool: ExpandedTool }
  | { kind: "mcp"; tool: McpTool; call: McpServers["call"] }
  | { kind: "ask_human" }
  | { kind: "load_skill"; skills: readonly Skill[] };

/** The run's tools, computed once per run (loop/tool-catalogue.ts). */
export interface ToolCatalogue {
  /** Sent with every request, in this order: the agent's tools, its MCP servers', ask_human, load_skill when there are skills. One array for the run (the context keys its count of them on it). */
  advertised: FunctionTool[];
  /** The entry of a name the model called; undefined for a name the run does not offer. */
  find(name: string): CatalogueEntry | undefined;
}

/** The run's journal: the loop's only state between iterations. */
export interface LoopJournal {
  /** Appends one event and returns it with seq and timestamp, as the event of its type. */
  append<E extends NewEvent>(event: E): EventOf<E["type"]>;
  /** Makes what was appended durable before anything depends on it (a tool run, a question shown). */
  sync(): void;
  /** The journal as it is now, as a request can show it: the events from the context window on, and the window state of all of it. */
  read(): ShownJournal;
  /** The run's state after the journal as it is now. */
  runState(): RunState;
}

/** One model exchange as think() hands it over. */
interface ModelExchange {
  iteration: number;
  /** When the call's first attempt was sent, ISO-8601 UTC. */
  timestamp: string;
  request: LlmRequest;
  reply: LlmReply;
  duration_ms: number;
  /** The journal event each of the request's messages renders (the context's `renderedFrom`); absent when a hook replaced the messages. */
  renderedFrom?: BuiltContext["renderedFrom"] | undefined;
}

/** What a tool call's record holds beside its name: its arguments, command, whole output, box… as the call's kind has them. */
type ToolExecution = Record<string, unknown> & { tool_name: string };

/** The audit trail beside the journal (io/). */
interface LoopRecords {
  /** One model exchange. */
  invocation(exchange: ModelExchange): void;
  /** One tool call's whole facts: its command, full output, box. */
  toolExecution(record: ToolExecution): void;
}

/** Builds the messages of one request from the journal; the run's sources (files, generators) and budget are the port's. */
interface LoopContext {
  build(journal: ShownJournal, iteration: number, overflow?: ContextEnv["overflow"]): Promise<BuiltContext>;
}

/** An exec tool's argv as the run runs it: in its box, through the process runner, noted in the owner record, with the run's TRACEPARENT. */
export interface ToolProcesses {
  /** Opens the box a call of this tool runs in; throws, saying why, when it cannot be made. */
  prepare(toolName: string): Promise<PreparedCall>;
}

export interface PreparedCall {
  /** The box's policy as declared (agent.yaml's `sandbox:`), passed on to the io record as it is; null when the tool runs unboxed. */
  policy: Readonly<Record<string, unknown>> | null;
  /**
   * Runs the call whose ACTION_REQUEST has seq `requestSeq`, then closes the box; `env`: the call's own variables (its
   * action id and idempotency key) beside the run's; `refused`: the distinct targets its proxy refused (bounded),
   * `refusedMore`: refusals of targets that list has no room for.
   */
  run(call: { argv: string[]; stdin: string | undefined; timeoutMs: number; requestSeq: number; env: Record<string, string> }): Promise<{ result: InvokeResult; refused: string[]; refusedMore?: number }>;
}

type LoopHook = (name: HookName, iteration: number, payload: unknown, env?: HookCallEnv) => Promise<HookOutcome>;

/** Where the loop says what it does: engine.log, the live stream on stderr, the status line. */
interface LoopLog {
  log(line: string): void;
  progress(line: string): void;
  activity: ActivitySink;
}

/** The person ask_human reaches. */
interface LoopHuman {
  /** Present with -i: asks on the terminal and returns the answer. */
  askInteractively?: ((question: HumanQuestion) => Promise<string>) | undefined;
  /** Puts an open question where the person answering it finds it (interaction/request.json). */
  publish(request: InteractionRequest): void;
  /** Removes a question once its answer is recorded. */
  clear(): void;
}

/** What the loop knows of the run's settings. */
interface LoopSettings {
  runId: string;
  /** The tools' working directory, `${CWD}` in their arguments. */
  workDir: string;
  /** `${AGENT_HOME}` in tools' arguments. */
  agentHome: string;
  llm: LlmConfig;
  /** The schema a final answer must meet. */
  output: StructuredOutput | undefined;
  /** The observation bound and the model whose tokenizer counts it. */
  budget: ContextBudget;
  /** Removed from a failed attempt's server words before they are journaled. */
  secrets: readonly string[];
  /** The `delta continue` that resumes this run with a message. */
  continueCommand(message: string): string;
}

/** The run's budgets (its own, a fleet's ledger): each model attempt is admitted before it is sent, or the run is deferred. */
export interface LoopBudget {
  /** Reserves the attempt's worst case, or throws a DeferredError (BUDGET_EXHAUSTED) and nothing is sent. */
  admit(request: LlmRequest, iteration: number): Promise<AttemptAdmission>;
}

/** A batched call's answer, as its ended batch returned it. */
export type BatchAnswer =
  | { kind: "reply"; reply: LlmReply; batchId: string }
  /** The batch ended without a reply for the call (errored, expired, cancelled): the call's model error. */
  | { kind: "failed"; batchId: string; reason: string; httpStatus?: number; serverMessage?: string; serverCode?: string };

/** The fields of a MODEL_QUEUED the run's batch port fills in. */
type QueuedCall = Omit<EventOf<"MODEL_QUEUED">, "seq" | "timestamp" | "hash" | "type" | "iteration">;

/** llm.batch / --batch: the run's model calls go through the provider's batch API instead of being sent. */
export interface LoopBatch {
  /** False when the run sends its calls live and only collects the one it left waiting in a batch. */
  queues: boolean;
  /** --live: a queued or submitted call is sent live instead, and no new call is queued. */
  live: boolean;
  /** Writes the request's record (io/batch/) and names the call: what its MODEL_QUEUED holds. */
  queue(iteration: number, request: LlmRequest): QueuedCall;
  /** The request a MODEL_QUEUED names, read back from its record. */
  request(queued: EventOf<"MODEL_QUEUED">): LlmRequest;
  /** `run --batch --submit`: sends the run's own queued call at once, its submission journaled before and after. */
  submitOwn: ((queued: EventOf<"MODEL_QUEUED">) => Promise<void>) | null;
  /** The answer of a submitted call once its batch has ended; null while the batch runs. */
  collect(call: BatchedCall): Promise<BatchAnswer | null>;
}

export interface LoopPorts {
  journal: LoopJournal;
  records: LoopRecords;
  model: Provider;
  /** Null when the run's calls are sent live and none waits in a batch. */
  batch: LoopBatch | null;
  budget: LoopBudget;
  context: LoopContext;
  tools: ToolCatalogue;
  processes: ToolProcesses;
  hook: LoopHook;
  log: LoopLog;
  human: LoopHuman;
  settings: LoopSettings;
  signal: AbortSignal;
}
