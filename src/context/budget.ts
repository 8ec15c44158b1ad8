// A run's token budget from agent.yaml and context.yaml: the model's window, the room kept for the reply, the bound of one observation.
import { modelFamily } from "./model-windows.js";
import type { ContextConfig } from "./schema.js";

export interface ContextBudget {
  model: string;
  /** llm.context_window, else the model's known window; null when neither. */
  contextWindow: number | null;
  /** The max_tokens requests carry (llm.max_tokens, or Anthropic's own default): the reply's room in any window (see replyReserve), or null. */
  maxReplyTokens: number | null;
  /** The tightest max_iterations and max_tokens of the journal sources (several share one window). */
  maxIterations?: number;
  maxTokens?: number;
  /** Tokens one observation may take, or null when no token limit applies (bytes bound it as always). */
  observationTokens: number | null;
}

const DEFAULT_REPLY_RESERVE = 4096;

/** An observation may take a quarter of the tightest token limit, so one tool's output never fills the window. */
const OBSERVATION_SHARE = 4;

interface LlmLimits {
  model: string;
  context_window?: number | undefined;
  max_tokens?: number | undefined;
}

/**
 * `maxReplyTokens`: the max_tokens the run's requests carry, which the caller knows from its
 * provider (llm/reply-tokens.ts: a protocol may send one of its own); by default llm.max_tokens.
 */
export function contextBudget(llm: LlmLimits, context: ContextConfig, maxReplyTokens: number | null = llm.max_tokens ?? null): ContextBudget {
  const contextWindow = llm.context_window ?? modelFamily(llm.model).contextWindow;
  const journals = context.sources.flatMap((source) => (source.type === "journal" ? [source] : []));
  const maxIterations = smallest(journals.map((source) => source.max_iterations));
  const maxTokens = smallest(journals.map((source) => source.max_tokens));
  const tokenLimit = smallest([maxTokens, contextWindow === null ? undefined : contextWindow - replyReserve(maxReplyTokens, contextWindow)]);
  return {
    model: llm.model,
    contextWindow,
    maxReplyTokens,
    ...(maxIterations !== undefined ? { maxIterations } : {}),
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    observationTokens: tokenLimit === undefined ? null : Math.max(1, Math.floor(tokenLimit / OBSERVATION_SHARE)),
  };
}

/** Tokens a window keeps free for the reply: the max_tokens requests carry, else a quarter of the window up to 4096. */
export function replyReserve(maxReplyTokens: number | null, window: number): number {
  return maxReplyTokens ?? Math.min(DEFAULT_REPLY_RESERVE, Math.floor(window / 4));
}

function smallest(values: (number | undefined)[]): number | undefined {
  const numbers = values.filter((value): value is number => value !== undefined);
  return numbers.length === 0 ? undefined : Math.min(...numbers);
}
