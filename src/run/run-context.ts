// Everything one engine process needs to drive a run: its files, its agent, its model and its hooks.
import type { AgentPackage } from "../agent/load.js";
import type { ContextBudget } from "../context/budget.js";
import type { HookName } from "../hooks/schema.js";
import type { HookOutcome } from "../hooks/run-hook.js";
import type { JournalEvent, NewEvent } from "../journal/events.js";
import type { Provider } from "../llm/types.js";
import type { ToolGroup } from "../store/lease/owner-record.js";
import type { InvocationLog, IoRecord } from "../store/io-log.js";
import type { RunState } from "../journal/run-state.js";
import type { RunSecrets } from "../secrets.js";
import type { RunPaths } from "../store/run-dir.js";
import type { ActivitySink } from "../loop/activity.js";
import type { McpServers } from "../tools/mcp/servers.js";
import type { SandboxMode } from "../tools/sandbox-schema.js";
import type { OpenBox } from "./tool-box.js";

export interface HumanQuestion {
  prompt: string;
  input_type: string;
  sensitive: boolean;
}

/** How `delta run` and `delta continue` alike drive a process: limits, model source, signal and output. */
export interface DriveOptions {
  maxIterations: number;
  replay?: string;
  /** --model: overrides DELTA_MODEL and llm.model for this invocation. */
  model?: string;
  /** --sandbox MODE: the mode of every tool's and server's box for this invocation (continue journals it). */
  sandbox?: SandboxMode;
  /** --base-url: the model endpoint for this invocation, over .env files, the environment and agent.yaml. */
  baseUrl?: string;
  /** --accept-endpoint: `continue` may send the run to another endpoint than the one it was started with. */
  acceptEndpoint?: boolean;
  signal: AbortSignal;
  progress: (line: string) => void;
  /** What the engine is doing now, for a status line; text a model streams arrives here too. */
  activity?: ActivitySink;
  verbose: boolean;
  warn: (line: string) => void;
  askInteractively?: (question: HumanQuestion) => Promise<string>;
}

export interface RunContext {
  runId: string;
  workDir: string;
  paths: RunPaths;
  agent: AgentPackage;
  /** Where each model exchange is recorded (io/invocations/). */
  invocations: InvocationLog;
  /** This process's MCP servers, when the agent names any. */
  mcp: McpServers | null;
  /** The token budget from agent.yaml and context.yaml, for the context and for observations. */
  budget: ContextBudget;
  provider: Provider;
  /** Appends one event to journal.jsonl and returns it with seq and timestamp. */
  append(event: NewEvent): JournalEvent;
  /** Flushes the journal to disk before anything that depends on it. */
  sync(): void;
  /** TRACEPARENT naming the span of the tool call whose ACTION_REQUEST has this seq (null for a journal with no trace). */
  traceParentFor(requestSeq: number): string | null;
  /** Notes in this process's owner record the process group of the tool it just spawned, or (null) that the tool ended. */
  noteToolGroup(group: ToolGroup | null): void;
  /** The journal as it is on disk now (verified incremental read). */
  readEvents(): JournalEvent[];
  /** The run's state after the journal as it is on disk now, folded once as it is read (store/run-files.ts). */
  runState(): RunState;
  /** Writes a tool execution's io record; returns its path. */
  recordToolExecution(record: IoRecord & { tool_name: string }): string;
  /** Runs a lifecycle hook; "none" when the agent defines none for that point. */
  hook(name: HookName, iteration: number, payload: unknown, env?: Record<string, string>): Promise<HookOutcome>;
  /** Lines for engine.log. */
  log(line: string): void;
  /** The live Think-Act-Observe stream, on stderr. */
  progress(line: string): void;
  /** What the engine is doing now (redacted like progress). */
  activity: ActivitySink;
  /** Present with -i: asks on the terminal and returns the answer. */
  askInteractively?: (question: HumanQuestion) => Promise<string>;
  signal: AbortSignal;
  secrets: RunSecrets;
  /** The environment tools, hooks and generators start from: the engine's, without its API key unless the agent passes it on. */
  childEnv: Record<string, string>;
  /** The box a call of this tool runs in (close it after the call), or null when the tool runs unboxed. */
  openToolBox(toolName: string): Promise<OpenBox | null>;
  /** The box hooks and generators share for this process, when agent.yaml says `sandbox.hooks: true`. */
  hookBox: OpenBox | null;
}
