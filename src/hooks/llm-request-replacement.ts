// Checks the request body a pre_llm_request hook may return as `output.payload` to replace the model request.
import { z } from "zod";
import { ProviderDataSchema, ToolCallSchema } from "../journal/events.js";
import type { ChatMessage, FunctionTool } from "../conversation.js";

// Annotated with the provider-neutral types so the schemas cannot drift from them.
const ChatMessageSchema: z.ZodType<ChatMessage> = z.discriminatedUnion("role", [
  z.strictObject({ role: z.literal("system"), content: z.string() }),
  z.strictObject({ role: z.literal("user"), content: z.string() }),
  z.strictObject({
    role: z.literal("assistant"),
    content: z.string().nullable(),
    tool_calls: z.array(ToolCallSchema).optional(),
    reasoning: z.string().optional(),
    provider_data: ProviderDataSchema.optional(),
  }),
  z.strictObject({ role: z.literal("tool"), content: z.string(), tool_call_id: z.string() }),
]);

const FunctionToolSchema: z.ZodType<FunctionTool> = z.strictObject({
  type: z.literal("function"),
  function: z.strictObject({
    name: z.string().min(1),
    description: z.string(),
    parameters: z.record(z.string(), z.unknown()),
  }),
});

/** Strict, so a misspelt field is an error rather than silently ignored; fields left out keep the engine's values. */
const LlmRequestReplacementSchema = z.strictObject({
  model: z.string().min(1).optional(),
  messages: z.array(ChatMessageSchema).min(1),
  tools: z.array(FunctionToolSchema).optional(),
  params: z.record(z.string(), z.unknown()).optional(),
});
export type LlmRequestReplacement = z.infer<typeof LlmRequestReplacementSchema>;

/** The replacement as a typed object, or a message naming each bad field and how to fix it. */
export function validateLlmRequestReplacement(value: unknown): LlmRequestReplacement | string {
  const parsed = LlmRequestReplacementSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${issue.path.length === 0 ? "payload" : `payload.${formatPath(issue.path)}`}: ${issue.message}`);
  return `${problems.join("; ")}. Fix: print {"payload": {"messages": [...], "model"?, "tools"?, "params"?}} on stdout, with messages shaped like the stdin payload's, or print no "payload" to keep the request unchanged`;
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.map((key, index) => (typeof key === "number" ? `[${key}]` : `${index === 0 ? "" : "."}${String(key)}`)).join("");
}
