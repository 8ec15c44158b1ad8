// The provider-neutral conversation: the messages and tools the context builder makes, and the reply every provider returns.
import type { AnsweredBy, ProviderData, ToolCall, Usage } from "./journal/events.js";

/** An assistant turn as journaled: what the provider needs back travels in provider_data, for its protocol only. */
export interface AssistantMessage {
  role: "assistant";
  content: string | null;
  tool_calls?: ToolCall[];
  reasoning?: string;
  provider_data?: ProviderData;
  /** The endpoint that made this reply (its THOUGHT's answered_by): its provider_data goes back to that endpoint only. */
  [MADE_BY]?: AnsweredBy;
}

/**
 * The key of an assistant message's origin: a symbol, so it stays in this process (no record, hook payload, request
 * comparison or server sees it) while spreads of the message keep it.
 */
export const MADE_BY: unique symbol = Symbol("made by");

export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | AssistantMessage
  | { role: "tool"; content: string; tool_call_id: string };

/** An OpenAI-style function tool as advertised to the model. */
export interface FunctionTool {
  type: "function";
  function: {
    name: string;
    description: string;
    parameters: Record<string, unknown>;
  };
}

export interface LlmRequest {
  model: string;
  messages: ChatMessage[];
  tools: FunctionTool[];
  /** Other Chat Completions parameters from agent.yaml `llm:` (temperature, max_tokens, …). */
  params: Record<string, unknown>;
  /** The schema the final answer must meet, asked for in the protocol's native field (llm/structured-output.ts decides when). */
  output_format?: OutputFormat;
}

/** A JSON Schema for the final answer as a provider's structured-output mode takes it; `strict` asks for constrained decoding. */
export interface OutputFormat {
  name: string;
  schema: Record<string, unknown>;
  strict: boolean;
}

export interface LlmReply {
  content: string | null;
  tool_calls: ToolCall[];
  usage: Usage | null;
  model: string;
  finish_reason: string | null;
  reasoning?: string;
  provider_data?: ProviderData;
  /** The endpoint and model that answered (a fallback chain says; a replay does not). */
  answered_by?: AnsweredBy;
  /** Earlier replies whose reasoning state was not sent to this endpoint, another having made them. */
  reasoning_dropped?: number;
}

/** How a reply ended: the model finished, a token limit cut it off, a filter (or the model) refused, or the server paused the turn half-way. */
type ReplyEnding = "finished" | "truncated" | "refused" | "paused";

// Each protocol's words for the two endings that are not a finish (Chat Completions, Gemini's own, Anthropic, Responses).
const TRUNCATED = new Set(["length", "max_tokens", "max_output_tokens", "model_length", "model_context_window_exceeded"]);
const REFUSED = new Set(["content_filter", "refusal", "safety", "recitation", "prohibited_content", "blocklist", "spii"]);
// Anthropic pauses a long turn of its own server tools (web search) and expects it sent back to go on: the text so far is not an answer.
const PAUSED = new Set(["pause_turn"]);

/** The ending a provider's finish_reason names; anything unrecognised counts as finished. */
export function replyEnding(finishReason: string | null | undefined): ReplyEnding {
  const reason = finishReason?.toLowerCase();
  if (reason === undefined) return "finished";
  if (TRUNCATED.has(reason)) return "truncated";
  if (REFUSED.has(reason)) return "refused";
  if (PAUSED.has(reason)) return "paused";
  return "finished";
}
