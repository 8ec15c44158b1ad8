// The value a run returns to the CLI: status, result or error, and the metrics of RunResult v2.0.
import type { RunStatus } from "../journal/events.js";
import type { RunState } from "./run-state.js";

export interface Pricing {
  input_per_million: number;
  output_per_million: number;
}

export interface RunUsage {
  input_tokens: number;
  output_tokens: number;
  /** null when agent.yaml gives no llm.pricing: an unknown cost is never reported as 0. */
  total_cost_usd: number | null;
  model_usage: Record<string, { input_tokens: number; output_tokens: number }>;
}

export interface RunOutcome {
  runId: string | null;
  status: RunStatus;
  result?: unknown;
  error?: { type: string; message: string; details?: string };
  interaction?: { prompt: string; input_type: string; sensitive: boolean; request_id: string };
  iterations: number;
  startTime: Date;
  endTime: Date;
  usage: RunUsage;
  agentName: string | null;
  workspacePath: string | null;
  runDir: string | null;
}

export function usageFromState(state: RunState, pricing: Pricing | undefined): RunUsage {
  const cost = pricing
    ? (state.usage.input_tokens * pricing.input_per_million + state.usage.output_tokens * pricing.output_per_million) / 1_000_000
    : null;
  return {
    input_tokens: state.usage.input_tokens,
    output_tokens: state.usage.output_tokens,
    total_cost_usd: cost,
    model_usage: Object.fromEntries(state.usage.byModel),
  };
}

export const EMPTY_USAGE: RunUsage = { input_tokens: 0, output_tokens: 0, total_cost_usd: null, model_usage: {} };

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
