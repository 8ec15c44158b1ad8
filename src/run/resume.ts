// `delta continue`: take the run, check its state (read after taking it) against the state table, repair it if needed, and resume.
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { readRunFile } from "../safe-open.js";
import { join } from "node:path";
import { loadAgent, type AgentPackage } from "../agent/load.js";
import { preflightAgent } from "../agent/preflight.js";
import { forAgent, ORPHANED_RUN, RunRefusedError } from "../errors.js";
import type { EventOf } from "../journal/events.js";
import { recordAnswer } from "../loop/ask-human.js";
import type { LoopPorts } from "../loop/ports.js";
import { clearInteraction } from "./interaction-files.js";
import { continueCommand } from "../continue-command.js";
import type { RunOutcome } from "./outcome.js";
import { chooseProvider, type ProviderChoice } from "../llm/provider-choice.js";
import { batchMode, type RunBatchMode } from "./batch-mode.js";
import { replayChoice, verboseLog, withModel } from "./model-choice.js";
import { journaledOutput, withOutput } from "./output-choice.js";
import type { DriveOptions } from "./drive-options.js";
import type { RunId } from "../store/run-id.js";
import type { RunState } from "../journal/run-state.js";
import { setupSecrets } from "./engine-start.js";
import { runStint } from "./stint.js";
import { checkBoxLayout, checkSandbox } from "../process/sandbox/check.js";
import { continuedSandbox } from "../process/sandbox/policy.js";
import { resolveRunBudget } from "./run-budget.js";
import { checkRunEndpoint, journaledEndpoint } from "./run-endpoint.js";
import { startAgentMcp, type AgentMcp } from "./mcp-start.js";
import { stopLeftoverServers } from "../store/lease/leftover-servers.js";
import { takeRun, type RunHold } from "../store/lease/take-run.js";
import { rememberRun } from "../store/run-index.js";
import { pausePoint } from "../pause-point.js";
import { killLeftoverGroup } from "../process/leftover-group.js";
import { describeHost, isThisHost } from "../store/lease/host-identity.js";
import { findRunDir, type RunPaths } from "../store/run-dir.js";
import { checkTrustedOwner } from "../store/trusted-owner.js";
import { readOrRebuildMetadata, type RunMetadata } from "../store/run-metadata.js";
import { openRunFiles, type RunFiles, type WritableRunFiles } from "../store/run-files.js";

interface ContinueRequest extends DriveOptions {
  runId: RunId;
  workDir: string;
  message?: string;
  force: boolean;
}

/** `opened`: the run's files, when this process has read them already (`run --if-exists resume`). */
export async function continueRun(request: ContinueRequest, opened?: RunFiles): Promise<RunOutcome> {
  const paths = findRunDir(request.workDir, request.runId);
  checkTrustedOwner(paths.runDir, "the run's folder");
  checkTrustedOwner(paths.journal, "the run's journal");
  // The one reader and writer of the run's files in this process.
  const files = opened ?? openRunFiles(paths, { warn: request.warn });
  // The first event never changes once written: the agent can be loaded (and refused) before the run is taken.
  const start = files.firstEvent();
  if (start?.type !== "ENGINE_START") throw new RunRefusedError(`Run ${request.runId} has no ENGINE_START at the start of ${paths.journal}; it cannot be continued.`);
  const loaded = await loadAgent(start.agent_home, { warn: request.warn });
  return forAgent(loaded.name, () => continueLoaded(request, files, start, loaded));
}

async function continueLoaded(request: ContinueRequest, files: RunFiles, start: EventOf<"ENGINE_START">, loaded: AgentPackage): Promise<RunOutcome> {
  const { paths } = files;
  const output = await journaledOutput(start);
  checkTrustedOwner(join(loaded.home, "hooks.yaml"), "the agent's hooks file");
  await preflightAgent(loaded, start.work_dir);
  // Read before the run is taken (quietly: its holder may be writing); read again after, this parses only what changed.
  const lastStart = files.landmarks({ quiet: true }).starts.at(-1);
  const sandbox = continuedSandbox(lastStart?.config.sandbox, loaded, request.sandbox);
  await checkSandbox(sandbox, loaded, request.warn);
  checkBoxLayout(sandbox, loaded, start.work_dir);
  // The run keeps the limits and the ledger it had, unless this invocation gives others.
  const budget = resolveRunBudget(loaded, request.budget ?? {}, lastStart?.config.budget, { workDir: start.work_dir, sandbox, home: process.env.HOME ?? homedir() });

  pausePoint("continue-before-lock");
  const hold = await takeRun(paths, { runId: request.runId, workDir: request.workDir, force: request.force, progress: request.progress, signal: request.signal });
  rememberRun({ runId: request.runId, workDir: request.workDir });
  let state: RunState;
  let answer: Answer;
  let provider: ProviderChoice;
  let agent: AgentPackage;
  let metadata: RunMetadata;
  let mcp: AgentMcp | null = null;
  let batch: RunBatchMode | null;
  let writable: WritableRunFiles | null = null;
  // Where live export starts sending: this process's first event; or, when the run's last engine died (its spans may
  // never have left it), that engine's ENGINE_START, so its whole invocation is sent again with the same ids.
  let traceFromSeq: number;
  try {
    // Every decision about the run is made here, from the journal as it is now that this process holds the run.
    // Folded on the one read of the journal, beside the run state: no decision here needs the events themselves.
    state = files.state();
    const marks = files.landmarks();
    traceFromSeq = state.status === "RUNNING" ? (marks.starts.at(-1)?.seq ?? 1) : marks.count + 1;
    answer = planAnswer(request, paths, state);
    // The replay position is the number of THOUGHTs recorded: read, like everything else, now that the run is ours.
    provider = await chooseProvider(loaded, start.work_dir, {
      replay: replayChoice(request),
      recordedThoughts: state.iterations,
      baseUrl: request.baseUrl,
      announce: request.progress,
      warn: request.warn,
      log: verboseLog(request),
    });
    checkRunEndpoint(journaledEndpoint(marks.starts), {
      runId: request.runId,
      endpoint: provider.describe.endpoint,
      fallback: provider.describe.fallback ?? [],
      accepted: Boolean(request.acceptEndpoint) || request.baseUrl !== undefined,
      source: provider.describe.base_url_source,
    });
    agent = withOutput(withModel(loaded, request.model ?? provider.model), output, provider.protocol, request.warn);
    batch = batchMode(agent.llm, request, provider, lastStart?.config.batch, agent.configPath, budget);
    metadata = readOrRebuildMetadata(paths, marks, state, hold.previous?.owner ?? null, request.warn);
    reportTakeover(request, hold, state);
    const leftover = await endLeftoverTool(hold, state);
    if (leftover) request.progress(`[Janitor] ${leftover}`);
    // Holding the run, any earlier holder is gone: servers it left running (it was killed) go too, before ours start.
    // Not after a holder that released the run (it stopped its servers; their pids may name other processes by now).
    const previous = hold.previous;
    const leftoverServers = previous === null || previous.released ? [] : await stopLeftoverServers({ owner: previous.owner, metadata });
    for (const stopped of leftoverServers) {
      request.progress(`[Janitor] Stopped ${stopped}, left running by the engine that stopped`);
    }
    mcp = await startAgentMcp(agent, { workDir: start.work_dir, provider, sandbox, signal: request.signal, warn: request.warn, echo: verboseLog(request), activity: request.activity });
    writable = await files.startWriting({
      secrets: setupSecrets({ provider, mcp }),
      owner: hold.lostReason,
      warn: (line) => request.progress(`[warning] ${line}`),
      requestRecords: agent.requestRecords,
      listener: request.appended,
    });
    if (state.status === "RUNNING") markInterrupted(writable, request.runId, state, hold, leftover);
  } catch (err) {
    await mcp?.servers.close();
    writable?.close();
    hold.release();
    throw err;
  }

  try {
    return await runStint({
      runId: request.runId,
      workDir: start.work_dir,
      files: writable,
      setup: { agent, provider, mcp, sandbox, budget, batch },
      drive: request,
      metadata,
      hold,
      traceFromSeq,
      opening: (ports) => open(ports, paths, state, answer),
    });
  } finally {
    await mcp?.servers.close();
  }
}

function reportTakeover(request: ContinueRequest, hold: RunHold, state: RunState): void {
  const previous = hold.previous;
  if (previous === null || previous.released) return;
  request.progress(state.status === "RUNNING"
    ? `[Janitor] Cleaned up orphaned run: ${previous.reason}`
    : `[Janitor] Took over the lock of run ${request.runId} from its last holder: ${previous.reason}`);
}

type Answer = { kind: "text"; text: string } | { kind: "ask" } | { kind: "none" };

/** Refuses (before anything is touched) a continuation the state table does not allow. */
function planAnswer(request: ContinueRequest, paths: RunPaths, state: RunState): Answer {
  const message = request.message;
  switch (state.status) {
    case "WAITING_FOR_INPUT": {
      if (message !== undefined) return { kind: "text", text: message };
      const responseFile = join(paths.interactionDir, "response.txt");
      if (existsSync(responseFile)) return { kind: "text", text: readRunFile(responseFile).replace(/\r?\n$/, "") };
      if (request.askInteractively) return { kind: "ask" };
      throw new RunRefusedError(
        `Run ${request.runId} is WAITING_FOR_INPUT: ${state.waiting?.prompt ?? "a question is open"}\n` +
          `Answer with: ${continueCommand(request.runId, request.workDir, "<answer>")}\n` +
          `or write the answer to ${responseFile} and continue without -m.`,
      );
    }
    case "COMPLETED":
      if (message === undefined) {
        throw new RunRefusedError(
          "Run is COMPLETED. To continue, provide a message using -m/--message (or --message-file)\n" +
            `Example: ${continueCommand(request.runId, request.workDir, "Now do something else")}`,
        );
      }
      return { kind: "text", text: message };
    // A failed or deferred run is retried as it stands (CONTRACT §4, §5); a message, when given, is appended first.
    case "FAILED":
    case "INTERRUPTED":
    case "DEFERRED":
    case "RUNNING":
      return message === undefined ? { kind: "none" } : { kind: "text", text: message };
  }
}

/**
 * The previous holder died on this host while a tool ran, and the run still waits for that tool's result: its process
 * group may live on. Ends it before the model is told the result is unknown; says what it did, or null.
 */
async function endLeftoverTool(hold: RunHold, state: RunState): Promise<string | null> {
  const owner = hold.previous?.owner;
  const group = owner?.tool_group;
  if (!owner || !group || hold.previous?.released || !isThisHost(owner)) return null;
  // The group ran for the ACTION_REQUEST it names; only a call of the last THOUGHT still without a result can be left running.
  const pending = state.pending.find((call) => call.requestSeq === group.request_seq);
  if (!pending) return null;
  const killed = await killLeftoverGroup({ pgid: group.pgid, startedAtUnix: group.started_at_unix });
  if (killed.length === 0) return null;
  return `Killed what was left of the previous engine's tool ${pending.call.name} (process group ${group.pgid}: ${killed.length} process${killed.length === 1 ? "" : "es"})`;
}

/** Records the janitor's RUNNING → INTERRUPTED transition in the journal and metadata, naming the old holder. */
function markInterrupted(files: WritableRunFiles, runId: string, state: RunState, hold: RunHold, leftover: string | null): void {
  const owner = hold.previous?.owner;
  const engine = owner ? `The engine process (pid ${owner.pid} on ${describeHost(owner)})` : "The engine process";
  const { journal } = files;
  journal.append({
    type: "ERROR",
    error_type: ORPHANED_RUN,
    error_message: `[Janitor] ${engine} stopped without recording an end (${hold.previous?.reason ?? "no owner record"}); run marked INTERRUPTED.${leftover ? ` ${leftover}.` : ""}`,
    error_details: {
      previous_owner: owner ? { generation: owner.generation, pid: owner.pid, hostname: owner.hostname, machine_id: owner.machine_id ?? null, boot_id: owner.boot_id ?? null } : null,
      judged: hold.previous?.reason ?? null,
      taken_as_generation: hold.generation,
    },
  });
  journal.append({ type: "ENGINE_END", run_id: runId, status: "INTERRUPTED", final_iteration: state.iterations });
  journal.sync();
}

async function open(ports: LoopPorts, paths: RunPaths, state: RunState, answer: Answer): Promise<void> {
  const waiting = state.status === "WAITING_FOR_INPUT" ? state.waiting : null;
  if (waiting) {
    const text = answer.kind === "text" ? answer.text : await ports.human.askInteractively!(waiting);
    recordAnswer(ports.journal, waiting, text, Date.parse(waiting.timestamp));
    clearInteraction(paths.interactionDir);
    return;
  }
  if (answer.kind === "text") ports.journal.append({ type: "USER_MESSAGE", content: answer.text });
}
