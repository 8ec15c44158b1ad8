// The loop's ports over the run this process holds (loop/ports.ts), built once: its journal and io records (the run's files), model, context, tools, hooks, log, human and settings.
import { homedir } from "node:os";
import { contextBudget } from "../context/budget.js";
import { buildContext } from "../context/build.js";
import { continueCommand } from "../continue-command.js";
import { runHook } from "../hooks/run-hook.js";
import { requestedReplyTokens } from "../llm/reply-tokens.js";
import type { HumanQuestion, LoopPorts } from "../loop/ports.js";
import { toolCatalogue } from "../loop/tool-catalogue.js";
import type { RunHold } from "../store/lease/take-run.js";
import type { WritableRunFiles } from "../store/run-files.js";
import type { RunSetup } from "./engine-start.js";
import { hookResultEvent, journalsHookResult } from "./hook-event.js";
import { reportHookOutcome } from "./hook-report.js";
import { replayRun } from "./replay-run.js";
import { clearInteraction, writeInteractionRequest } from "./interaction-files.js";
import { toolPolicy } from "../process/sandbox/policy.js";
import { hiddenFromBoxes, openBox, type OpenBox } from "./tool-box.js";
import { toolProcesses } from "./tool-processes.js";
import { batchPort } from "./batch-port.js";

/** What the ports are built over: the run and its setup, and what the process that holds it has made of them. */
interface PortsGround {
  runId: string;
  workDir: string;
  files: WritableRunFiles;
  setup: RunSetup;
  /** The one box hooks and generators share when the agent boxes them; its owner opens and closes it. */
  hookBox: OpenBox | null;
  /** The environment an unboxed child starts from. */
  childEnv(): Record<string, string>;
  /** TRACEPARENT naming the span of the tool call whose ACTION_REQUEST has this seq. */
  traceParentFor(seq: number): string | null;
  noteToolGroup: RunHold["noteToolGroup"];
  /** Aborted by an interrupt, or when the run is taken over. */
  signal: AbortSignal;
  log: LoopPorts["log"];
  askInteractively?: ((question: HumanQuestion) => Promise<string>) | undefined;
  /** False once the loop has ended: the hooks of the end (on_error, on_run_end) then run to their end whatever the signal. */
  interruptible(): boolean;
  /** The run's budgets (budget-gate.ts). */
  budget: LoopPorts["budget"];
}

export function loopPorts(ground: PortsGround): LoopPorts {
  const { runId, workDir, files, hookBox, signal } = ground;
  const { agent, provider } = ground.setup;
  const { journal, paths } = files;
  const tools = toolCatalogue(agent.tools, ground.setup.mcp?.servers ?? null, agent.skills);
  // What any box of the run shows empty: the context reads no file a link leads into it.
  const hidden = hiddenFromBoxes(ground.setup.sandbox, { workDir, agentHome: agent.home }, process.env.HOME ?? homedir());
  const budget = contextBudget(agent.llm, agent.context, requestedReplyTokens(provider.protocol, agent.llm.max_tokens, agent.llm.thinking?.budget_tokens));
  const { log } = ground.log;
  return {
    journal: {
      append: (event) => journal.append(event),
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
      invocation: (exchange) => files.invocations.write(exchange),
      toolExecution: (record) => files.writeToolExecution(record),
    },
    model: provider.providerFor(
      replayRun({ runId, workDir, agentHome: agent.home, secrets: files.secrets, source: provider.describe.replay }, { append: (event) => journal.append(event), runState: () => files.state() }, ground.log),
    ),
    budget: ground.budget,
    batch: batchPort({
      runId,
      files,
      provider,
      mode: ground.setup.batch,
      waitingApi: files.state().batched?.queued.batch_api ?? null,
      maxToolCalls: agent.llm.max_tool_calls,
      progress: ground.log.progress,
      signal,
    }),
    context: {
      build: (shown, iteration, overflow) =>
        buildContext(agent.context, {
          agentHome: agent.home,
          cwd: workDir,
          runId,
          runDir: paths.runDir,
          journalPath: paths.journal,
          journal: shown,
          baseEnv: () => hookBox?.env ?? ground.childEnv(),
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
      workDir,
      agent,
      signal,
      openToolBox: async (toolName) => {
        const policy = toolPolicy(ground.setup.sandbox, toolName);
        return policy === null ? null : openBox(policy, { workDir, agentHome: agent.home, passthrough: agent.envPassthrough }, ground.childEnv());
      },
      childEnv: ground.childEnv,
      traceParentFor: ground.traceParentFor,
      noteToolGroup: ground.noteToolGroup,
    }),
    hook: async (name, iteration, payload, env) => {
      const outcome = await runHook(agent.hooks, { name, payload, env }, {
        agentHome: agent.home,
        cwd: workDir,
        runId,
        runDir: paths.runDir,
        journalPath: paths.journal,
        iteration,
        baseEnv: () => hookBox?.env ?? ground.childEnv(),
        sandbox: hookBox?.box,
        record: (hookName, record) => {
          const file = files.writeHookRecord(hookName, record);
          if (journalsHookResult(hookName)) journal.append(hookResultEvent(record, iteration, file, paths.runDir));
        },
        log,
        signal: ground.interruptible() ? signal : undefined,
      });
      return reportHookOutcome(name, outcome, ground.log.progress);
    },
    log: ground.log,
    human: {
      askInteractively: ground.askInteractively,
      publish: (request) => writeInteractionRequest(paths.interactionDir, request),
      clear: () => clearInteraction(paths.interactionDir),
    },
    settings: {
      runId,
      workDir,
      agentHome: agent.home,
      llm: agent.llm,
      output: agent.output,
      budget,
      secrets: files.secrets,
      continueCommand: (message) => continueCommand(runId, workDir, message),
    },
    signal,
  };
}
