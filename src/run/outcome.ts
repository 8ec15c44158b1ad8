// The value a run returns to the CLI: status, result or error, and the metrics of RunResult v2.0.
import type { Deferred, RunStatus } from "../journal/events.js";
import type { RunUsage } from "../llm/usage.js";
import { redactSecrets, redactText } from "../secrets.js";

export interface RunOutcome {
  runId: string | null;
  status: RunStatus;
  result?: unknown;
  /** A completed run's final answer as the model wrote it. */
  resultText?: string | null;
  /** The result met the run's output schema: `result` is the parsed value. */
  structured?: boolean;
  error?: { type: string; message: string; details?: string };
  interaction?: { prompt: string; input_type: string; sensitive: boolean; request_id: string };
  /** With DEFERRED: what the run waits for, and from when `continue --due` takes it. */
  deferred?: Deferred;
  iterations: number;
  startTime: Date;
  endTime: Date;
  usage: RunUsage;
  agentName: string | null;
  workspacePath: string | null;
  runDir: string | null;
  /** The run's OpenTelemetry trace id, from its first ENGINE_START; null when no run was made. */
  traceId?: string | null;
}

/** A completed run's text result: parsed when it is valid JSON, else the string itself. */
export function parseResult(text: string | null): unknown {
  if (text === null) return null;
  const trimmed = text.trim();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    try {
      return JSON.parse(trimmed);
    } catch {
      return text;
    }
  }
  return text;
}

/** The outcome with every known secret removed from what it quotes: the result, the error and the question. */
export function redactOutcome(outcome: RunOutcome, secrets: readonly string[]): RunOutcome {
  return {
    ...outcome,
    ...(outcome.result !== undefined ? { result: redactSecrets(outcome.result, secrets, { fields: false }) } : {}),
    ...(typeof outcome.resultText === "string" ? { resultText: redactText(outcome.resultText, secrets) } : {}),
    ...(outcome.error ? { error: { ...outcome.error, message: redactText(outcome.error.message, secrets) } } : {}),
    ...(outcome.interaction ? { interaction: { ...outcome.interaction, prompt: redactText(outcome.interaction.prompt, secrets) } } : {}),
    ...(outcome.deferred ? { deferred: { ...outcome.deferred, message: redactText(outcome.deferred.message, secrets) } } : {}),
  };
}
