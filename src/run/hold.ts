// One engine process's hold on a run: builds the loop's ports over the run's files (opened by start or resume, store/run-files.ts), drives the loop and closes cleanly.
import { statSync } from "node:fs";
import { homedir, hostname } from "node:os";
import { join } from "node:path";
import type { AgentPackage } from "../agent/load.js";
import { contextBudget } from "../context/budget.js";
import { requestedReplyTokens } from "../llm/reply-tokens.js";
import { ENGINE_VERSION } from "../engine-version.js";
import { DeltaError, ENGINE_ERROR, OWNERSHIP_LOST, OwnershipLostError, errorMessage } from "../errors.js";
import { redactText, runSecrets, type RunSecrets } from "../secrets.js";
import { runHook } from "../hooks/run-hook.js";
import { agentChildEnv } from "./child-env.js";
import type { EventOf, JournalEvent, NewEvent, RunStatus } from "../journal/events.js";
import { runLoop, type LoopEnd } from "../loop/run-loop.js";
import type { HumanQuestion, LoopPorts } from "../loop/ports.js";
import { toolCatalogue } from "../loop/tool-catalogue.js";
import { buildContext } from "../context/build.js";
import { continueCommand } from "../continue-command.js";
import { clearInteraction, writeInteractionRequest } from "./interaction-files.js";
import { toolProcesses } from "./tool-processes.js";
import type { RunOutcome } from "./outcome.js";
import { parseResult, redactOutcome } from "./outcome.js";
import { EMPTY_USAGE, priceRunUsage } from "../llm/usage.js";
import type { ProviderChoice } from "../llm/provider-choice.js";
import type { AgentMcp } from "./mcp-start.js";
import { hookPolicy, journaledSandbox, toolPolicy } from "./sandbox-policy.js";
import type { RunSandbox } from "../tools/sandbox-schema.js";
import { hiddenFromBoxes, openBox } from "./tool-box.js";
import { NO_ACTIVITY, type ActivitySink } from "../loop/activity.js";
import { hookResultEvent, journalsHookResult } from "./hook-event.js";
import { reportHookOutcome } from "./hook-report.js";
import { holderFacts, type RunMetadata } from "../store/run-metadata.js";
import type { WritableRunFiles } from "../store/run-files.js";
import type { RunHold } from "../store/lease/take-run.js";
import { otlpHeaderSecrets, samplingOf } from "../trace/otel-env.js";
import { formatTraceParent, journalTraceOf, newRunTrace, parseTraceParent, spanIdOf } from "../trace/trace-ids.js";
import { openLiveTrace } from "./live-trace.js";

/** How often metadata.json's iteration count is refreshed during a run; the journal is the truth in between. */
const METADATA_REFRESH_MS = 1_000;

export interface SessionOptions {
  runId: string;
  workDir: string;
  /** The run's files, opened for writing by `run` or `continue`: this process's one reader and writer of them. */
  files: WritableRunFiles;
  agent: AgentPackage;
  provider: ProviderChoice;
  /** The MCP servers this process started for the agent; the session stops them when the loop ends. */
  mcp: AgentMcp | null;
  /** The boxes of tools, servers and hooks for this process (journaled in ENGINE_START). */
  sandbox: RunSandbox;
  /** Metadata carried over (created_at, initial_message) or made for a new run. */
  metadata: RunMetadata;
  maxIterations: number;
  signal: AbortSignal;
  progress: (line: string) => void;
  activity?: ActivitySink | undefined;
  /** -v: every engine.log line is echoed to stderr too. */
  verbose: boolean;
  askInteractively?: (question: HumanQuestion) => Promise<string>;
  /** Events to append right after ENGINE_START (the user's message, a janitor's note…). */
  opening?: (ports: LoopPorts) => Promise<void> | void;
  /** ENGINE_START and metadata.json were already written by this process, before the run directory was published. */
  started?: boolean;
  /** This process's hold on the run: the journal is written only while it lasts. */
  hold: RunHold;
  /** The first journal event this process wrote before the session (a janitor's note), for live export; default: the session's first. */
  traceFromSeq?: number;
}

/** Drives a run from this process's ENGINE_START to its ENGINE_END and returns the outcome. */
export async function runSession(options: SessionOptions): Promise<RunOutcome> {
  const startTime = new Date();
  const { files, agent, runId } = options;
  const { paths, secrets } = files;
  // The one redaction point of stderr progress: lines quote the model, tools and hooks, any of which can repeat the key.
  const progress = (line: string): void => options.progress(redactText(line, secrets));
  const sink = options.activity ?? NO_ACTIVITY;
  const activity: ActivitySink = (event) => sink(event.kind === "model-text" ? { ...event, text: redactText(event.text, secrets) } : event);
  const log = (line: string): void => {
    files.log(line);
    if (options.verbose) progress(`[log] ${line}`);
  };
  options.mcp?.attachLog((line) => files.log(line), log);
  const { journal } = files;
  // Folded on the run files' one read; the events before this process's are replayed only when spans are exported live.
  const marks = files.landmarks();
  const live = await openLiveTrace({ first: marks.first, path: files.paths.journal }, options.started ? 1 : (options.traceFromSeq ?? marks.count + 1), secrets, progress);
  let runTrace: ReturnType<typeof journalTraceOf> = null;
  // The tool's span, as TRACEPARENT with the run's sampling decision: a `delta` the tool starts joins the run's trace under it.
  const traceParentFor = (seq: number): string | null => {
    runTrace ??= journalTraceOf(files.firstEvent());
    return runTrace === null ? null : formatTraceParent(runTrace.traceId, spanIdOf(runTrace.traceId, seq), samplingOf(process.env, runTrace).sampled);
  };
  // A run taken over meanwhile stops what it is doing (a tool, a model call) as an interrupt would.
  const signal = AbortSignal.any([options.signal, options.hold.lost]);
  let metadata: RunMetadata = { ...options.metadata, journal_bytes: undefined, status: "RUNNING", end_time: null, error: null, ...holderFacts(startTime.getTime()), mcp_server_processes: options.mcp?.records, max_iterations: options.maxIterations, model: agent.llm.model, updated_at: startTime.toISOString() };
  if (!options.started) files.writeMetadata(metadata);
  // The owner record names the servers too: a later holder ends what a dead one left, even after metadata.json is lost.
  if (options.mcp && options.mcp.records.length > 0) {
    options.hold.noteServerGroups(options.mcp.records.map((record) => ({ server: record.server, pgid: record.pid, started_at_unix: record.start_time_unix })));
  }
  // Hooks of the loop stop when the run is interrupted; on_error and on_run_end at the end still run.
  let closing = false;
  let metadataWrittenAt = Date.now();
  // Made on first use: a run whose model calls no tool and that has no hooks never needs it.
  let childEnv: Record<string, string> | undefined;
  const childEnvOf = (): Record<string, string> =>
    (childEnv ??= agentChildEnv(agent, options.provider, secrets));

  // Hooks and generators are the author's code: boxed only when the agent says so, all in one box for the process.
  const hooksPolicy = hookPolicy(options.sandbox);
  const hookBox = hooksPolicy === null
    ? null
    : await openBox(hooksPolicy, { workDir: options.workDir, agentHome: agent.home, passthrough: agent.envPassthrough, writableInProtected: [join(options.workDir, ".delta", "context_artifacts")] }, childEnvOf());
  const tools = toolCatalogue(agent.tools, options.mcp?.servers ?? null, agent.skills);
  const hidden = hiddenFromBoxes(options.sandbox, { workDir: options.workDir, agentHome: agent.home }, process.env.HOME ?? homedir());
  const budget = contextBudget(agent.llm, agent.context, requestedReplyTokens(options.provider.protocol, agent.llm.max_tokens, agent.llm.thinking?.budget_tokens));
  const append = (event: NewEvent): JournalEvent => {
    const written = journal.append(event);
    live?.push(written);
    if (written.type === "THOUGHT") {
      metadata = { ...metadata, iterations: written.iteration, updated_at: written.timestamp };
      // A cache of the journal: refreshed at most once a second while RUNNING; every status change is written at once.
      const now = Date.now();
      if (now - metadataWrittenAt >= METADATA_REFRESH_MS) {
        files.writeMetadata(metadata);
        metadataWrittenAt = now;
      }
    }
    return written;
  };
  const ports: LoopPorts = {
    journal: {
      append,
      sync: () => journal.sync(),
      // Each iteration starts here: a process that lost the run stops before it calls the model again.
      read: () => {
        journal.verify();
        return files.shown();
      },
      runState: () => {
        journal.verify();
        return files.state();
      },
    },
    records: {
      invocation: (record) => files.invocations.write(record),
      toolExecution: (record) => files.writeToolExecution(record),
    },
    model: options.provider.provider,
    context: {
      build: (shown, iteration, overflow) =>
        buildContext(agent.context, {
          agentHome: agent.home,
          cwd: options.workDir,
          runId,
          runDir: paths.runDir,
          journalPath: paths.journal,
          journal: shown,
          baseEnv: () => hookBox?.env ?? childEnvOf(),
          sandbox: hookBox?.box,
          signal,
          log,
          budget,
          tools: tools.advertised,
          skillListings: agent.skillListings,
          hidden,
          iteration,
          ...(overflow ? { overflow } : {}),
        }),
    },
    tools,
    processes: toolProcesses({
      runId,
      workDir: options.workDir,
      agent,
      signal,
      openToolBox: async (toolName) => {
        const policy = toolPolicy(options.sandbox, toolName);
        return policy === null ? null : openBox(policy, { workDir: options.workDir, agentHome: agent.home, passthrough: agent.envPassthrough }, childEnvOf());
      },
      childEnv: childEnvOf,
      traceParentFor,
      noteToolGroup: (group) => options.hold.noteToolGroup(group),
    }),
    hook: async (name, iteration, payload, env) => {
      const outcome = await runHook(agent.hooks, { name, payload, env }, {
        agentHome: agent.home,
        cwd: options.workDir,
        runId,
        runDir: paths.runDir,
        journalPath: paths.journal,
        iteration,
        baseEnv: agent.hooks[name] === undefined ? undefined : hookBox?.env ?? childEnvOf(),
        sandbox: hookBox?.box,
        record: (hookName, record) => {
          const file = files.writeHookRecord(hookName, record);
          if (journalsHookResult(hookName)) append(hookResultEvent(record, iteration, file, paths.runDir));
        },
        log,
        signal: closing ? undefined : signal,
      });
      return reportHookOutcome(name, outcome, progress);
    },
    log: { log, progress, activity },
    human: {
      askInteractively: options.askInteractively,
      publish: (request) => writeInteractionRequest(paths.interactionDir, request),
      clear: () => clearInteraction(paths.interactionDir),
    },
    settings: {
      runId,
      workDir: options.workDir,
      agentHome: agent.home,
      llm: agent.llm,
      output: agent.output,
      budget,
      secrets,
      continueCommand: (message) => continueCommand(runId, options.workDir, message),
    },
    signal,
  };

  let end: LoopEnd;
  try {
    if (!options.started) append(engineStartEvent(options, false));
    await options.opening?.(ports);
    journal.sync();
    end = await runLoop(ports, options.maxIterations);
  } catch (err) {
    end = { status: "FAILED", error: { type: err instanceof DeltaError ? err.type : ENGINE_ERROR, message: errorMessage(err) } };
  }

  closing = true;
  activity({ kind: "idle" });
  // The servers are no longer needed: stopped before the end is recorded, so no hook at the end sees them running.
  await options.mcp?.servers.close();
  const open = { files, metadata, startTime };
  const lost = journal.lostReason() ?? options.hold.lostReason();
  try {
    const outcome = lost !== null ? stopLost(options, open, lost) : await finish(ports, options, open, end);
    // Bounded by OTEL_EXPORTER_OTLP_TIMEOUT: a dead collector costs that and one warning line, never the outcome.
    const warning = await live?.flush();
    if (warning) progress(warning);
    return { ...outcome, traceId: journalTraceOf(files.firstEvent())?.traceId ?? null };
  } finally {
    await hookBox?.close();
  }
}

/** A completed run's result (the schema-checked value, or the text parsed when it is JSON) and its raw text. */
function completedResult(end: LoopEnd, status: RunStatus): Pick<RunOutcome, "result" | "resultText" | "structured"> {
  if (end.status !== "COMPLETED" || status !== "COMPLETED") return { result: undefined };
  if (end.parsed) return { result: end.parsed.value, resultText: end.result, structured: true };
  return { result: parseResult(end.result), resultText: end.result };
}

interface OpenSession {
  files: WritableRunFiles;
  metadata: RunMetadata;
  startTime: Date;
}

/** The run was taken over: write nothing more (no event, no metadata, no hook, no release of a lock that is not ours). */
function stopLost(options: SessionOptions, open: OpenSession, lost: string): RunOutcome {
  open.files.close();
  const { message } = OwnershipLostError.of(options.runId, lost);
  options.progress(redactText(`[error] ${message}`, open.files.secrets));
  const endTime = new Date();
  return redactOutcome({
    runId: options.runId,
    status: "FAILED",
    result: undefined,
    error: { type: OWNERSHIP_LOST, message },
    interaction: undefined,
    iterations: 0,
    startTime: open.startTime,
    endTime,
    usage: EMPTY_USAGE,
    agentName: options.agent.name,
    workspacePath: options.workDir,
    runDir: open.files.paths.runDir,
  }, open.files.secrets);
}

/** What must never reach a file or the terminal: the provider's key, the values MCP servers read from the environment and the OTLP exporter's headers. */
export function sessionSecrets(options: Pick<SessionOptions, "provider" | "mcp">): RunSecrets {
  return runSecrets([...options.provider.secrets, ...(options.mcp?.servers.secrets ?? []), ...otlpHeaderSecrets(process.env)]);
}

/**
 * The trace fields of an ENGINE_START: the run's first journals its trace (the caller's TRACEPARENT, else a new one);
 * a later one journals the TRACEPARENT its caller gave, as a link.
 */
function traceFields(first: boolean): Partial<EventOf<"ENGINE_START">> {
  const parent = parseTraceParent(process.env.TRACEPARENT);
  if (first) return newRunTrace(parent);
  return parent ? { link_trace_id: parent.traceId, link_span_id: parent.spanId } : {};
}

/** The ENGINE_START this process records: who runs what, with which settings (never secrets); `first` for the run's first. */
export function engineStartEvent(options: Pick<SessionOptions, "runId" | "workDir" | "agent" | "provider" | "mcp" | "maxIterations" | "askInteractively" | "sandbox">, first: boolean): NewEvent {
  const { agent } = options;
  const mcpTools = options.mcp?.servers.tools ?? [];
  return {
    type: "ENGINE_START",
    run_id: options.runId,
    agent_home: agent.home,
    work_dir: options.workDir,
    config: {
      agent_name: agent.name,
      model: agent.llm.model,
      max_iterations: options.maxIterations,
      tools: [...agent.tools.map((tool) => tool.name), ...mcpTools.map((tool) => tool.name)],
      ...(agent.mcpServers.length > 0 && { mcp_servers: agent.mcpServers.map((server) => server.name) }),
      interactive: Boolean(options.askInteractively),
      // The boxes this process runs tools in; continue keeps them unless --sandbox changes the mode.
      sandbox: journaledSandbox(options.sandbox),
      pid: process.pid,
      // The host this invocation ran on: its spans' host.name, live or exported elsewhere later.
      hostname: hostname(),
      // So that show and report can price each call as the run's RunResult does.
      ...(agent.llm.pricing ? { pricing: agent.llm.pricing } : {}),
      // So that `continue` holds the run to the schema it started with.
      ...(agent.output ? { output_schema: agent.output.schema } : {}),
      ...options.provider.describe,
    },
    engine_version: ENGINE_VERSION,
    ...traceFields(first),
  };
}

async function finish(ports: LoopPorts, options: SessionOptions, open: OpenSession, end: LoopEnd): Promise<RunOutcome> {
  const { journal, hook } = ports;
  let status: RunStatus = end.status;
  const error = "error" in end ? end.error : undefined;
  let finalError = error;
  let journalBytes: number | undefined;
  try {
    if (error) {
      journal.append({ type: "ERROR", error_type: error.type, error_message: error.message });
      await hook("on_error", journal.runState().iterations, error, { ERROR_MESSAGE: error.message });
    }
    const state = journal.runState();
    journal.append({ type: "ENGINE_END", run_id: options.runId, status, final_iteration: state.iterations });
    open.files.journal.sync();
    journalBytes = statSync(open.files.paths.journal).size;
  } catch (err) {
    const lost = open.files.journal.lostReason() ?? options.hold.lostReason();
    if (lost !== null) return stopLost(options, open, lost);
    // Without ENGINE_END on disk the outcome is not recorded: never report it as a success.
    status = "FAILED";
    finalError = { type: ENGINE_ERROR, message: `Could not record the end of the run: ${errorMessage(err)}` };
  }
  const endTime = new Date();
  const state = journal.runState();
  const usage = priceRunUsage(state.usage, options.agent.llm.pricing);
  const { model_usage: _perModel, ...usageTotals } = usage;
  try {
    open.files.writeMetadata({
      ...open.metadata,
      status,
      iterations: state.iterations,
      updated_at: endTime.toISOString(),
      end_time: status === "WAITING_FOR_INPUT" ? null : endTime.toISOString(),
      error: finalError ? `${finalError.type}: ${finalError.message}` : null,
      usage: usageTotals,
      journal_bytes: journalBytes,
    }, { durable: true });
  } catch (err) {
    // metadata.json is only a cache of the journal: still release the lock and report the outcome.
    ports.log.progress(`[warning] ${errorMessage(err)}`);
  }
  await hook("on_run_end", state.iterations, { status, error: finalError ?? null });
  open.files.close();
  options.hold.release();

  // The one redaction point of the RunResult on stdout: the result and error quote the model and the server.
  return redactOutcome({
    runId: options.runId,
    status,
    ...completedResult(end, status),
    error: finalError,
    interaction: end.status === "WAITING_FOR_INPUT" && status === "WAITING_FOR_INPUT"
      ? { prompt: end.request.prompt, input_type: end.request.input_type, sensitive: end.request.sensitive, request_id: end.request.request_id }
      : undefined,
    iterations: state.iterations,
    startTime: open.startTime,
    endTime,
    usage,
    agentName: options.agent.name,
    workspacePath: options.workDir,
    runDir: open.files.paths.runDir,
  }, open.files.secrets);
}
