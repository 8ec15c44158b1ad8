// Translates our provider-neutral request into Chat Completions shapes, and a completion back into an LlmReply.
import type { ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { z } from "zod";
import type { ToolCall, Usage } from "../../journal/events.js";
import type { ChatMessage, LlmReply, LlmRequest } from "../../conversation.js";

/** A completion that cannot be turned into a reply; worth retrying, as gateways sometimes send one. */
export class UnusableReplyError extends Error {}

export function toChatCompletionBody(request: LlmRequest): ChatCompletionCreateParamsNonStreaming {
  // `stream` is ours to decide: this provider reads whole replies only.
  const { stream: _stream, ...params } = request.params;
  return {
    ...params,
    model: request.model,
    messages: request.messages.map(toMessageParam),
    ...(request.tools.length > 0 ? { tools: request.tools } : {}),
    stream: false,
  };
}

function toMessageParam(message: ChatMessage): ChatCompletionMessageParam {
  if (message.role !== "assistant") return message;
  const calls = message.tool_calls ?? [];
  return {
    role: "assistant",
    content: message.content,
    ...(calls.length > 0
      ? { tool_calls: calls.map((call) => ({ id: call.id, type: "function" as const, function: { name: call.name, arguments: call.arguments } })) }
      : {}),
  };
}

// Servers that speak "OpenAI-compatible" vary; accept what can be used and name what cannot.
const WireToolCallSchema = z.object({
  id: z.string().optional().nullable(),
  type: z.string().optional().nullable(),
  function: z.object({
    name: z.string().min(1),
    arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).optional().nullable(),
  }),
});

const WireCompletionSchema = z.object({
  model: z.string().optional().nullable(),
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullable().optional(),
          tool_calls: z.array(WireToolCallSchema).nullable().optional(),
        }),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .optional()
    .nullable(),
  usage: z.unknown().optional(),
});

const WireUsageSchema = z.object({
  prompt_tokens: z.number().int().nonnegative(),
  completion_tokens: z.number().int().nonnegative(),
});

export function toLlmReply(completion: unknown, requestedModel: string): LlmReply {
  const parsed = WireCompletionSchema.safeParse(completion);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UnusableReplyError(`the reply is not a chat completion (${issue ? `${issue.path.join(".") || "body"}: ${issue.message}` : "unreadable"})`);
  }
  const choice = parsed.data.choices?.[0];
  if (!choice) throw new UnusableReplyError("the reply has no choices");
  const toolCalls = (choice.message.tool_calls ?? []).map(toToolCall);
  const content = choice.message.content ?? null;
  if (content === null && toolCalls.length === 0) {
    throw new UnusableReplyError(`the reply has neither content nor tool calls (finish_reason: ${choice.finish_reason ?? "none"})`);
  }
  return {
    content,
    tool_calls: toolCalls,
    usage: toUsage(parsed.data.usage),
    model: parsed.data.model || requestedModel,
    finish_reason: choice.finish_reason ?? null,
  };
}

function toToolCall(call: z.infer<typeof WireToolCallSchema>): ToolCall {
  const args = call.function.arguments;
  return {
    // Some local servers omit ids; the journal needs one to pair the call with its result.
    id: call.id || `call_${globalThis.crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`,
    name: call.function.name,
    arguments: typeof args === "string" ? args : JSON.stringify(args ?? {}),
  };
}

function toUsage(usage: unknown): Usage | null {
  const parsed = WireUsageSchema.safeParse(usage);
  return parsed.success ? { input_tokens: parsed.data.prompt_tokens, output_tokens: parsed.data.completion_tokens } : null;
}
