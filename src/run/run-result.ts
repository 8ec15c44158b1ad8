// A run's outcome as RunResult v2.0: what `--format json` prints, the last line of stream-json, and what `delta mcp serve` answers; one schema, from which schemas/run-result.schema.json is generated.
import { z } from "zod";
import { DEFERRAL_REASON_NAMES, DEFERRAL_REASONS, type DeferralReason } from "../errors.js";
import { RunStatusSchema } from "../journal/events.js";
import { RunUsageSchema } from "../llm/usage.js";
import type { RunOutcome } from "./outcome.js";

/** What a DEFERRED run waits for: one of the reasons of errors.ts's table, when it may go on, and why in words. */
const RunDeferredSchema = z.object({
  reason: z.enum(DEFERRAL_REASON_NAMES).describe(Object.entries(DEFERRAL_REASONS).map(([name, meaning]) => `${name}: ${meaning}`).join(". ")),
  resume_after: z.string().nullable().describe("When the run may go on (ISO-8601 UTC); null when unknown: `continue --due` takes it at once."),
  message: z.string().describe("What the run waits for, in words."),
});

/** The question of a WAITING_FOR_INPUT run: answer it with `delta continue -m`. */
const RunQuestionSchema = z.object({ prompt: z.string(), input_type: z.string(), sensitive: z.boolean() });

/**
 * RunResult v2.0, the contract of the engine's stdout with the programs that run it; its descriptions are what
 * schemas/run-result.schema.json tells them. Fields a later 2.x adds are let through.
 */
export const RunResultSchema = z
  .looseObject({
    schema_version: z.literal("2.0"),
    run_id: z.string().nullable().describe("The run's id; null when no run was made (a refusal of `delta run`)."),
    trace_id: z.string().nullable().describe("The run's OpenTelemetry trace id (find it in Jaeger, Tempo…); null when no run was made."),
    status: z.union([RunStatusSchema, z.literal("REFUSED")]).describe("How the run stands; REFUSED: nothing ran (exit 126)."),
    result: z.unknown().optional().describe("With COMPLETED: the final answer, the value that met the output schema, else the text parsed when it is JSON, else the text."),
    result_text: z.string().nullable().optional().describe("With COMPLETED: the final answer as the model wrote it."),
    error: z.object({ type: z.string(), message: z.string(), details: z.string().optional() }).optional().describe("Why the run failed, was interrupted or was refused."),
    interaction: RunQuestionSchema.optional().describe("With WAITING_FOR_INPUT: the question the agent asks."),
    deferred: RunDeferredSchema.optional().describe("With DEFERRED (exit 75): what the run waits for; `delta continue` goes on, `delta continue --due` once resume_after has passed."),
    metrics: z.object({
      iterations: z.number().int().nonnegative(),
      duration_ms: z.number(),
      start_time: z.string(),
      end_time: z.string(),
      usage: RunUsageSchema,
    }),
    metadata: z.object({
      agent_name: z.string().nullable(),
      workspace_path: z.string().nullable(),
    }),
  })
  .describe("What `delta run` and `delta continue` print with --format json, and the last line of --format stream-json.");
export type RunResult = z.infer<typeof RunResultSchema>;

/** What a RunResult reports: a run's outcome, or a refusal (exit 126) before anything ran, which no run records. */
type ResultOutcome = Omit<RunOutcome, "status"> & { status: RunResult["status"] };

export function toRunResult(outcome: ResultOutcome): RunResult {
  return {
    schema_version: "2.0",
    run_id: outcome.runId,
    trace_id: outcome.traceId ?? null,
    status: outcome.status,
    ...(outcome.status === "COMPLETED" ? { result: outcome.result ?? null, result_text: outcome.resultText ?? null } : {}),
    ...(outcome.error ? { error: outcome.error } : {}),
    ...(outcome.interaction
      ? { interaction: { prompt: outcome.interaction.prompt, input_type: outcome.interaction.input_type, sensitive: outcome.interaction.sensitive } }
      : {}),
    ...(outcome.status === "DEFERRED" && outcome.deferred
      ? { deferred: { reason: outcome.deferred.reason as DeferralReason, resume_after: outcome.deferred.resume_after, message: outcome.deferred.message } }
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
