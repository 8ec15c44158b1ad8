// A run's outcome as RunResult v2.0: what `--format json` prints, the last line of stream-json, and what `delta mcp serve` answers.
import type { RunOutcome } from "./outcome.js";

/** What a RunResult reports: a run's outcome, or a refusal (exit 126) before anything ran, which no run records. */
type ResultOutcome = Omit<RunOutcome, "status"> & { status: RunOutcome["status"] | "REFUSED" };

export function toRunResult(outcome: ResultOutcome): Record<string, unknown> {
  return {
    schema_version: "2.0",
    run_id: outcome.runId,
    // The run's OpenTelemetry trace: find it in Jaeger, Tempo… by this id (null for a refusal, which made no run).
    trace_id: outcome.traceId ?? null,
    status: outcome.status,
    ...(outcome.status === "COMPLETED" ? { result: outcome.result ?? null, result_text: outcome.resultText ?? null } : {}),
    ...(outcome.error ? { error: outcome.error } : {}),
    ...(outcome.interaction
      ? { interaction: { prompt: outcome.interaction.prompt, input_type: outcome.interaction.input_type, sensitive: outcome.interaction.sensitive } }
      : {}),
    metrics: {
      iterations: outcome.iterations,
      duration_ms: outcome.endTime.getTime() - outcome.startTime.getTime(),
      start_time: outcome.startTime.toISOString(),
      end_time: outcome.endTime.toISOString(),
      usage: outcome.usage,
    },
    metadata: {
      agent_name: outcome.agentName,
      workspace_path: outcome.workspacePath,
    },
  };
}
