// `delta run`: validate everything, claim a fresh run directory (published complete with its first events), then drive the run.
import { homedir } from "node:os";
import { basename, join } from "node:path";
import { loadAgent, type AgentPackage } from "../agent/load.js";
import { loadOutputSchemaFile } from "../agent/output-schema.js";
import { preflightAgent } from "../agent/preflight.js";
import { forAgent } from "../errors.js";
import type { RunBudget } from "../journal/events.js";
import { chooseProvider, type ProviderChoice } from "../llm/provider-choice.js";
import type { RunOutcome } from "./outcome.js";
import type { DriveOptions } from "./drive-options.js";
import type { RunId } from "../store/run-id.js";
import { batchMode, type RunBatchMode } from "./batch-mode.js";
import { engineStartEvent, setupSecrets, type RunSetup } from "./engine-start.js";
import { runStint, type StintOptions } from "./stint.js";
import { checkTrustedOwner } from "../store/trusted-owner.js";
import { startAgentMcp, type AgentMcp } from "./mcp-start.js";
import { createFirstOwner, holdNewRun, type RunHold } from "../store/lease/take-run.js";
import { openRunFiles, type WritableRunFiles } from "../store/run-files.js";
import type { OwnerRecord } from "../store/lease/owner-record.js";
import { holderFacts } from "../store/run-metadata.js";
import { stageNewRunDir, stageRunDir, type StagedRun } from "../store/run-dir.js";
import { rememberRun } from "../store/run-index.js";
import { rememberLastUsed, removeCreatedWorkspace, resolveWorkspace, type Workspace } from "../store/workspace.js";
import { replayChoice, verboseLog, withModel } from "./model-choice.js";
import { withOutput } from "./output-choice.js";
import { checkBoxLayout, checkSandbox } from "../process/sandbox/check.js";
import { declaredSandbox } from "../process/sandbox/policy.js";
import { resolveRunBudget } from "./run-budget.js";

export interface StartRequest extends DriveOptions {
  agentHome: string;
  message: string;
  runId?: RunId;
  workDir?: string;
  yes: boolean;
  isTTY: boolean;
  promptWorkspace?: (question: string) => Promise<string>;
  /** --output-schema: a schema file for this run, in place of agent.yaml's output_schema. */
  outputSchema?: string;
}

export async function startRun(request: StartRequest): Promise<RunOutcome> {
  const loaded = await loadAgent(request.agentHome, { warn: request.warn });
  return forAgent(loaded.name, () => startLoaded(request, loaded));
}

async function startLoaded(request: StartRequest, loaded: AgentPackage): Promise<RunOutcome> {
  const output = request.outputSchema === undefined ? loaded.output : await loadOutputSchemaFile(request.outputSchema, loaded.home);
  const sandbox = declaredSandbox(loaded, request.sandbox);
  // Before the workspace: a run that asks for a box this machine cannot give leaves nothing behind.
  await checkSandbox(sandbox, loaded, request.warn);
  checkTrustedOwner(join(loaded.home, "hooks.yaml"), "the agent's hooks file");
  const workspace = await resolveWorkspace({
    agentHome: loaded.home,
    workDir: request.workDir,
    yes: request.yes,
    isTTY: request.isTTY,
    prompt: request.promptWorkspace,
  });
  // Everything that can refuse the run is checked before it leaves a trace: no workspace, run directory or LAST_USED.
  let agent = loaded;
  let provider: ProviderChoice;
  let mcp: AgentMcp | null;
  let budget: RunBudget;
  let batch: RunBatchMode | null;
  try {
    checkBoxLayout(sandbox, loaded, workspace.workDir);
    await preflightAgent(loaded, workspace.workDir);
    provider = await chooseProvider(loaded, workspace.workDir, {
      replay: replayChoice(request),
      recordedThoughts: 0,
      baseUrl: request.baseUrl,
      announce: request.progress,
      warn: request.warn,
      log: verboseLog(request),
    });
    agent = withOutput(withModel(loaded, request.model ?? provider.model), output, provider.protocol, request.warn);
    budget = resolveRunBudget(agent, request.budget ?? {}, undefined, { workDir: workspace.workDir, sandbox, home: process.env.HOME ?? homedir() });
    // An endpoint with no batch API is refused here, before the run leaves a trace.
    batch = batchMode(agent.llm, request, provider, undefined, agent.configPath, budget);
    // Last of the checks, being the slowest: a server that cannot start refuses the run.
    mcp = await startAgentMcp(agent, { workDir: workspace.workDir, provider, sandbox, signal: request.signal, warn: request.warn, echo: verboseLog(request), activity: request.activity });
  } catch (err) {
    removeCreatedWorkspace(workspace);
    throw err;
  }
  try {
    return await claimAndRun(request, workspace, { agent, provider, mcp, sandbox, budget, batch });
  } finally {
    await mcp?.servers.close();
  }
}

/** Claims the run directory, publishes its first events as this process's run, and drives it. */
async function claimAndRun(request: StartRequest, workspace: Workspace, setup: RunSetup): Promise<RunOutcome> {
  const { agent, mcp } = setup;
  if (request.workDir === undefined) rememberLastUsed(agent.home, workspace);
  const staged = request.runId === undefined ? stageNewRunDir(workspace.workDir) : stageRunDir(workspace.workDir, request.runId);
  const runId = staged.runId;
  const now = new Date().toISOString();
  const stint: Omit<StintOptions, "files" | "hold"> = {
    runId,
    workDir: workspace.workDir,
    setup,
    drive: request,
    metadata: {
      run_id: runId,
      workspace_id: basename(workspace.workDir),
      agent_name: agent.name,
      status: "RUNNING",
      created_at: now,
      updated_at: now,
      end_time: null,
      initial_message: request.message,
      task: request.message,
      model: agent.llm.model,
      iterations: 0,
      max_iterations: request.maxIterations,
      error: null,
      agent_home: agent.home,
      work_dir: workspace.workDir,
      ...holderFacts(Date.now()),
      mcp_server_processes: mcp?.records,
    },
    started: true,
  };
  // The journal's writer is opened before the run is published, and asks the hold (from then on) whether the run is still ours.
  let hold: RunHold | null = null;
  const { files, owner } = await publishFirstEvents(staged, stint, request.message, () => hold?.lostReason() ?? null);
  hold = holdNewRun(files.paths, owner);
  rememberRun({ runId, workDir: workspace.workDir });
  request.progress(`Run ${runId} in ${workspace.workDir}`);
  return runStint({ ...stint, files, hold });
}

/** Journals ENGINE_START and the message in the staged directory, durably, with its first owner record, then publishes it as the run. */
async function publishFirstEvents(
  staged: StagedRun,
  stint: Omit<StintOptions, "files" | "hold">,
  message: string,
  lostReason: () => string | null,
): Promise<{ files: WritableRunFiles; owner: OwnerRecord }> {
  let owner: OwnerRecord;
  let files: WritableRunFiles | null = null;
  try {
    owner = createFirstOwner(staged.paths);
    const { drive, setup } = stint;
    files = await openRunFiles(staged.paths, { warn: drive.progress }).startWriting({
      secrets: setupSecrets(setup),
      owner: lostReason,
      warn: (line) => drive.progress(`[warning] ${line}`),
      requestRecords: setup.agent.requestRecords,
      listener: drive.appended,
    });
    files.writeMetadata(stint.metadata);
    files.journal.append(engineStartEvent(stint, setup, drive, true));
    files.journal.append({ type: "USER_MESSAGE", content: message });
    files.journal.sync();
    files.published(staged.publish());
  } catch (err) {
    files?.close();
    staged.discard();
    throw err;
  }
  return { files, owner };
}
