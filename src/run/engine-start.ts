// The ENGINE_START this process records: who runs the run with what (agent, model, tools, boxes, endpoint), never a secret; and the secrets of that setup.
import { hostname } from "node:os";
import type { AgentPackage } from "../agent/load.js";
import { ENGINE_VERSION } from "../engine-version.js";
import type { EventOf, NewEvent, RunBudget } from "../journal/events.js";
import type { ProviderChoice } from "../llm/provider-choice.js";
import { journaledPricing } from "../llm/settings-schema.js";
import { runSecrets, type RunSecrets } from "../secrets.js";
import type { RunSandbox } from "../process/sandbox/policy-schema.js";
import { otlpSecrets } from "../trace/otel-env.js";
import { newRunTrace, parseTraceParent } from "../trace/trace-ids.js";
import type { DriveOptions } from "./drive-options.js";
import type { AgentMcp } from "./mcp-start.js";
import { unlimited } from "./run-budget.js";
import type { RunBatchMode } from "./batch-mode.js";
import { journaledSandbox } from "../process/sandbox/policy.js";

/** What this invocation runs the run with: the agent as loaded (model and output schema chosen), its provider, its MCP servers and its boxes. */
export interface RunSetup {
  agent: AgentPackage;
  provider: ProviderChoice;
  /** The MCP servers this process started for the agent, or null for an agent without any. */
  mcp: AgentMcp | null;
  /** The boxes of tools, servers and hooks for this process (journaled in ENGINE_START). */
  sandbox: RunSandbox;
  /** The run's budget for this invocation (journaled in ENGINE_START, kept by continue). */
  budget: RunBudget;
  /** llm.batch / --batch: the batch API the run's calls go through, or null when they are sent live. */
  batch: RunBatchMode | null;
}

/** What must never reach a file or the terminal: the provider's key, the values MCP servers read from the environment and the OTLP exporter's credentials. */
export function setupSecrets(setup: Pick<RunSetup, "provider" | "mcp">): RunSecrets {
  return runSecrets([...setup.provider.secrets, ...(setup.mcp?.servers.secrets ?? []), ...otlpSecrets(process.env)]);
}

/** The ENGINE_START this process records for run `runId` in `workDir`; `first` for the run's first. */
export function engineStartEvent(run: { runId: string; workDir: string }, setup: RunSetup, drive: Pick<DriveOptions, "maxIterations" | "askInteractively">, first: boolean): NewEvent {
  const { agent } = setup;
  const mcpTools = setup.mcp?.servers.tools ?? [];
  return {
    type: "ENGINE_START",
    run_id: run.runId,
    agent_home: agent.home,
    work_dir: run.workDir,
    config: {
      agent_name: agent.name,
      model: agent.llm.model,
      max_iterations: drive.maxIterations,
      tools: [...agent.tools.map((tool) => tool.name), ...mcpTools.map((tool) => tool.name)],
      ...(agent.mcpServers.length > 0 && { mcp_servers: agent.mcpServers.map((server) => server.name) }),
      interactive: Boolean(drive.askInteractively),
      // The boxes this process runs tools in; continue keeps them unless --sandbox changes the mode.
      sandbox: journaledSandbox(setup.sandbox),
      pid: process.pid,
      // The host this invocation ran on: its spans' host.name, live or exported elsewhere later.
      hostname: hostname(),
      // So that show and report can price each call as the run's RunResult does.
      ...journaledPricing(agent.llm),
      // So that `continue` holds the run to the schema it started with.
      ...(agent.output ? { output_schema: agent.output.schema } : {}),
      ...setup.provider.describe,
      // So that `continue` keeps the run to its limits and its fleet's ledger.
      ...(unlimited(setup.budget) ? {} : { budget: setup.budget }),
      // So that `continue` keeps queuing the run's calls for the batch API.
      ...(setup.batch === null ? {} : { batch: setup.batch.api }),
    },
    engine_version: ENGINE_VERSION,
    ...traceFields(first),
  };
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
