// The schema of one recorded model exchange, io/invocations/<timestamp>_<iteration>.json, written by the engine and read by replay.
import { z } from "zod";
import { ProviderDataSchema, ToolCallSchema, UsageSchema } from "../journal/events.js";
import { OutputFormatSchema, RequestRefSchema } from "./request-parts.js";
import type { ChatMessage, FunctionTool, LlmReply, LlmRequest } from "../conversation.js";

export const ChatMessageSchema: z.ZodType<ChatMessage> = z.discriminatedUnion("role", [
  z.object({ role: z.literal("system"), content: z.string() }),
  z.object({ role: z.literal("user"), content: z.string() }),
  z.object({
    role: z.literal("assistant"),
    content: z.string().nullable(),
    tool_calls: z.array(ToolCallSchema).optional(),
    reasoning: z.string().optional(),
    provider_data: ProviderDataSchema.optional(),
  }),
  z.object({ role: z.literal("tool"), content: z.string(), tool_call_id: z.string() }),
]);

export const FunctionToolSchema: z.ZodType<FunctionTool> = z.object({
  type: z.literal("function"),
  function: z.object({
    name: z.string(),
    description: z.string(),
    parameters: z.record(z.string(), z.unknown()),
  }),
});

export const LlmRequestSchema: z.ZodType<LlmRequest> = z.object({
  model: z.string(),
  messages: z.array(ChatMessageSchema),
  tools: z.array(FunctionToolSchema),
  params: z.record(z.string(), z.unknown()),
  output_format: OutputFormatSchema.optional(),
});

const LlmReplySchema: z.ZodType<LlmReply> = z.object({
  content: z.string().nullable(),
  tool_calls: z.array(ToolCallSchema),
  usage: UsageSchema.nullable(),
  model: z.string(),
  finish_reason: z.string().nullable(),
  reasoning: z.string().optional(),
  provider_data: ProviderDataSchema.optional(),
});

/** A record holds the whole `request` (`io.requests: full`, and every record of engines before 0.2) or `request_parts`, references into request-parts.jsonl. */
export const InvocationRecordSchema = z
  .object({
    iteration: z.number().int().positive(),
    /** When the request was sent, ISO-8601 UTC. */
    timestamp: z.string(),
    request: LlmRequestSchema.optional(),
    request_parts: RequestRefSchema.optional(),
    reply: LlmReplySchema,
    duration_ms: z.number().nonnegative(),
  })
  .refine((record) => (record.request === undefined) !== (record.request_parts === undefined), "a record holds either request or request_parts");
export type InvocationRecord = z.infer<typeof InvocationRecordSchema>;
