// One engine process's stint on a run it holds: from its ENGINE_START to its ENGINE_END, the loop driven over the ports (loop-ports.ts) and the end recorded.
import { statSync } from "node:fs";
import { pricingOf } from "../llm/settings-schema.js";
import { join } from "node:path";
import { DeltaError, ENGINE_ERROR, OWNERSHIP_LOST, OwnershipLostError, errorMessage } from "../errors.js";
import type { RunStatus } from "../journal/events.js";
import { EMPTY_USAGE, priceRunUsage } from "../llm/usage.js";
import { NO_ACTIVITY, type ActivitySink } from "../loop/activity.js";
import type { LoopPorts } from "../loop/ports.js";
import { runLoop, type LoopEnd } from "../loop/run-loop.js";
import { redactText } from "../secrets.js";
import type { RunHold } from "../store/lease/take-run.js";
import type { WritableRunFiles } from "../store/run-files.js";
import { holderFacts, type RunMetadata } from "../store/run-metadata.js";
import { samplingOf } from "../trace/otel-env.js";
import { formatTraceParent, journalTraceOf, spanIdOf } from "../trace/trace-ids.js";
import { continueCommand } from "../continue-command.js";
import { openLedger, type LedgerAccount } from "../store/budget/ledger.js";
import { budgetGate } from "./budget-gate.js";
import { codePathReporter } from "./code-paths.js";
import { agentChildEnv } from "./child-env.js";
import type { DriveOptions } from "./drive-options.js";
import { engineStartEvent, type RunSetup } from "./engine-start.js";
import { openLiveTrace } from "./live-trace.js";
import { loopPorts } from "./loop-ports.js";
import type { RunOutcome } from "./outcome.js";
import { parseResult, redactOutcome } from "./outcome.js";
import { hookPolicy } from "../process/sandbox/policy.js";
import { launcherHelper } from "../launcher-helper.js";
import { openBox } from "./tool-box.js";

/** How often metadata.json's iteration count is refreshed during a run; the journal is the truth in between. */
const METADATA_REFRESH_MS = 1_000;

export interface StintOptions {
  runId: string;
  workDir: string;
  /** The run's files, opened for writing by `run` or `continue`: this process's one reader and writer of them. */
  files: WritableRunFiles;
  /** This process's hold on the run (its lease): the journal is written only while it lasts. */
  hold: RunHold;
  /** Metadata carried over (created_at, initial_message) or made for a new run. */
  metadata: RunMetadata;
  setup: RunSetup;
  drive: DriveOptions;
  /** Events to append right after ENGINE_START (the user's message, an answer…). */
  opening?: (ports: LoopPorts) => Promise<void> | void;
  /** ENGINE_START and metadata.json were already written by this process, before the run directory was published. */
  started?: boolean;
  /** The first journal event this process wrote before the stint (a janitor's note), for live export; default: the stint's first. */
  traceFromSeq?: number;
}

/** Drives a run from this process's ENGINE_START to its ENGINE_END and returns the outcome. The setup's MCP servers are stopped when the loop ends. */
export async function runStint(options: StintOptions): Promise<RunOutcome> {
  const startTime = new Date();
  const { files, setup, drive, hold } = options;
  const { agent } = setup;
  const { secrets } = files;
  // The one redaction point of stderr progress: lines quote the model, tools and hooks, any of which can repeat the key.
  const progress = (line: string): void => drive.progress(redactText(line, secrets));
  const sink = drive.activity ?? NO_ACTIVITY;
  const activity: ActivitySink = (event) => sink(event.kind === "model-text" ? { ...event, text: redactText(event.text, secrets) } : event);
  const log = (line: string): void => {
    files.log(line);
    if (drive.verbose) progress(`[log] ${line}`);
  };
  setup.mcp?.attachLog((line) => files.log(line), log);
  // Folded on the run files' one read; the events before this process's are replayed only when spans are exported live.
  const marks = files.landmarks();
  const live = await openLiveTrace({ first: marks.first, path: files.paths.journal }, options.started ? 1 : (options.traceFromSeq ?? marks.count + 1), secrets, progress);
  if (live) files.subscribe((event) => live.push(event));
  // The launcher (none from sources): what this run's code paths are, for its code cache, and its hold on V8's loop flags.
  const launcher = launcherHelper();
  if (launcher) files.subscribe(codePathReporter(launcher.ranCodePath));
  let runTrace: ReturnType<typeof journalTraceOf> = null;
  // A run taken over meanwhile stops what it is doing (a tool, a model call) as an interrupt would.
  const signal = AbortSignal.any([drive.signal, hold.lost]);
  let metadata: RunMetadata = { ...options.metadata, journal_bytes: undefined, journal_hash: undefined, status: "RUNNING", end_time: null, error: null, ...holderFacts(startTime.getTime()), mcp_server_processes: setup.mcp?.records, max_iterations: drive.maxIterations, model: agent.llm.model, updated_at: startTime.toISOString() };
  if (!options.started) files.writeMetadata(metadata);
  let metadataWrittenAt = Date.now();
  // A cache of the journal: its iteration count refreshed at most once a second while RUNNING; every status change is written at once.
  files.subscribe((event) => {
    if (event.type !== "THOUGHT") return;
    metadata = { ...metadata, iterations: event.iteration, updated_at: event.timestamp };
    const now = Date.now();
    if (now - metadataWrittenAt >= METADATA_REFRESH_MS) {
      files.writeMetadata(metadata);
      metadataWrittenAt = now;
    }
  });
  // The owner record names the servers too: a later holder ends what a dead one left, even after metadata.json is lost.
  if (setup.mcp && setup.mcp.records.length > 0) {
    hold.noteServerGroups(setup.mcp.records.map((record) => ({ server: record.server, pgid: record.pid, started_at_unix: record.start_time_unix })));
  }
  // Made on first use: a run whose model calls no tool and that has no hooks never needs it.
  let childEnv: Record<string, string> | undefined;
  const childEnvOf = (): Record<string, string> => (childEnv ??= agentChildEnv(agent, setup.provider, secrets));
  // Hooks and generators are the author's code: boxed only when the agent says so, all in one box for the process.
  const hooksPolicy = hookPolicy(setup.sandbox);
  const hookBox = hooksPolicy === null
    ? null
    : await openBox(hooksPolicy, { workDir: options.workDir, agentHome: agent.home, passthrough: agent.envPassthrough, writableInProtected: [join(options.workDir, ".delta", "context_artifacts")] }, childEnvOf());
  // Hooks of the loop stop when the run is interrupted; on_error and on_run_end at the end still run.
  let closing = false;
  // The fleet's ledger, held from the first model call this process makes to its end.
  const ledger = setup.budget.ledger === null ? null : openLedger(setup.budget.ledger, { runId: options.runId, workDir: options.workDir, progress });
  const ports = loopPorts({
    runId: options.runId,
    workDir: options.workDir,
    files,
    setup,
    hookBox,
    childEnv: childEnvOf,
    // The tool's span, as TRACEPARENT with the run's sampling decision: a `delta` the tool starts joins the run's trace under it.
    traceParentFor: (seq) => {
      runTrace ??= journalTraceOf(files.firstEvent());
      return runTrace === null ? null : formatTraceParent(runTrace.traceId, spanIdOf(runTrace.traceId, seq), samplingOf(process.env, runTrace).sampled);
    },
    noteToolGroup: (group) => hold.noteToolGroup(group),
    signal,
    log: { log, progress, activity },
    askInteractively: drive.askInteractively,
    interruptible: () => !closing,
    budget: budgetGate({
      budget: setup.budget,
      llm: agent.llm,
      protocol: setup.provider.protocol,
      priceOf: (model) => pricingOf(agent.llm.pricing, model),
      runState: () => files.state(),
      ledger,
      raiseCommand: continueCommand(options.runId, options.workDir, undefined, ["--max-cost-usd", "<dollars>"]),
      progress,
      signal,
    }),
  });

  let end: LoopEnd;
  try {
    if (!options.started) ports.journal.append(engineStartEvent(options, setup, drive, false));
    await options.opening?.(ports);
    files.journal.sync();
    // V8's optimizing compiler and the scavenger's helper thread off while the loop runs (cli/runtime-flags.ts says why).
    const releaseLoopFlags = launcher?.holdLoopFlags() ?? (() => {});
    try {
      end = await runLoop(ports, drive.maxIterations);
    } finally {
      releaseLoopFlags();
    }
  } catch (err) {
    end = { status: "FAILED", error: { type: err instanceof DeltaError ? err.type : ENGINE_ERROR, message: errorMessage(err) } };
  }

  closing = true;
  activity({ kind: "idle" });
  closeLedger(ledger, progress);
  // The servers are no longer needed: stopped before the end is recorded, so no hook at the end sees them running.
  await setup.mcp?.servers.close();
  const open = { files, metadata, startTime };
  const lost = files.journal.lostReason() ?? hold.lostReason();
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

/** Settles what this process still holds in the ledger and lets its holder record go; a ledger that cannot be written is a warning, never the outcome. */
function closeLedger(ledger: LedgerAccount | null, progress: (line: string) => void): void {
  try {
    ledger?.close();
  } catch (err) {
    progress(`[warning] the budget ledger ${ledger?.path}: ${errorMessage(err)}`);
  }
}

/** A completed run's result (the schema-checked value, or the text parsed when it is JSON) and its raw text. */
function completedResult(end: LoopEnd, status: RunStatus): Pick<RunOutcome, "result" | "resultText" | "structured"> {
  if (end.status !== "COMPLETED" || status !== "COMPLETED") return { result: undefined };
  if (end.parsed) return { result: end.parsed.value, resultText: end.result, structured: true };
  return { result: parseResult(end.result), resultText: end.result };
}

interface OpenStint {
  files: WritableRunFiles;
  metadata: RunMetadata;
  startTime: Date;
}

/** The run was taken over: write nothing more (no event, no metadata, no hook, no release of a lock that is not ours). */
function stopLost(options: StintOptions, open: OpenStint, lost: string): RunOutcome {
  open.files.close();
  const { message } = OwnershipLostError.of(options.runId, lost);
  options.drive.progress(redactText(`[error] ${message}`, open.files.secrets));
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
    agentName: options.setup.agent.name,
    workspacePath: options.workDir,
    runDir: open.files.paths.runDir,
  }, open.files.secrets);
}

async function finish(ports: LoopPorts, options: StintOptions, open: OpenStint, end: LoopEnd): Promise<RunOutcome> {
  const { journal, hook } = ports;
  let status: RunStatus = end.status;
  const error = "error" in end ? end.error : undefined;
  let finalError = error;
  // Where the journal ends once this process's end is on disk: `delta verify` finds a tail cut off after it.
  let journalEnd: { journal_bytes: number; journal_hash: string } | undefined;
  const deferred = end.status === "DEFERRED" ? { reason: end.deferred.reason, resume_after: end.deferred.resumeAfter, message: end.deferred.message } : undefined;
  if (deferred) ports.log.progress(`[deferred] ${deferred.reason}${deferred.resume_after === null ? "" : ` until ${deferred.resume_after}`}: ${deferred.message}`);
  try {
    if (error) {
      journal.append({ type: "ERROR", error_type: error.type, error_message: error.message });
      await hook("on_error", journal.runState().iterations, error, { ERROR_MESSAGE: error.message });
    }
    const state = journal.runState();
    journal.append({ type: "ENGINE_END", run_id: options.runId, status, final_iteration: state.iterations, ...(deferred ? { deferred } : {}) });
    open.files.journal.sync();
    journalEnd = { journal_bytes: statSync(open.files.paths.journal).size, journal_hash: open.files.journal.head() };
  } catch (err) {
    const lost = open.files.journal.lostReason() ?? options.hold.lostReason();
    if (lost !== null) return stopLost(options, open, lost);
    // Without ENGINE_END on disk the outcome is not recorded: never report it as a success.
    status = "FAILED";
    finalError = { type: ENGINE_ERROR, message: `Could not record the end of the run: ${errorMessage(err)}` };
  }
  const endTime = new Date();
  const state = journal.runState();
  const usage = priceRunUsage(state.usage, pricingOf(options.setup.agent.llm.pricing, options.setup.agent.llm.model));
  const { model_usage: _perModel, ...usageTotals } = usage;
  try {
    open.files.writeMetadata({
      ...open.metadata,
      status,
      iterations: state.iterations,
      updated_at: endTime.toISOString(),
      end_time: status === "WAITING_FOR_INPUT" ? null : endTime.toISOString(),
      error: finalError ? `${finalError.type}: ${finalError.message}` : null,
      deferred: status === "DEFERRED" ? deferred ?? null : null,
      usage: usageTotals,
      ...journalEnd,
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
    ...(status === "DEFERRED" && deferred ? { deferred } : {}),
    iterations: state.iterations,
    startTime: open.startTime,
    endTime,
    usage,
    agentName: options.setup.agent.name,
    workspacePath: options.workDir,
    runDir: open.files.paths.runDir,
  }, open.files.secrets);
}
