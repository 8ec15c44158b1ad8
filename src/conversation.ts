// The provider-neutral conversation: the messages and tools the context builder makes, and the reply every provider returns.
import type { ToolCall, Usage } from "./journal/events.js";

export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCall[] }
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
}

export interface LlmReply {
  content: string | null;
  tool_calls: ToolCall[];
  usage: Usage | null;
  model: string;
  finish_reason: string | null;
}
