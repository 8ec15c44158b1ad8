// An OpenAI Responses reply as an LlmReply: message text, function calls, reasoning summaries as reasoning, the items' order and encrypted reasoning kept to go back.
import { z } from "zod";
import type { LlmReply } from "../../conversation.js";
import type { ToolCall } from "../../journal/events.js";
import { isRecord } from "../is-record.js";
import { checkNotEmpty, ErrorBodyError, parsedReply, UnusableReplyError } from "../reply-errors.js";
import { serverWords } from "../server-words.js";
import { itemPlace, needsKeeping, PROTOCOL, type ResponsesProviderData } from "./provider-data.js";

const ResponseSchema = z.looseObject({
  model: z.string().nullable().optional(),
  status: z.string().nullable().optional(),
  incomplete_details: z.looseObject({ reason: z.string().nullable().optional() }).nullable().optional(),
  output: z.array(z.looseObject({ type: z.string() })),
});

const FunctionCallSchema = z.looseObject({ call_id: z.string().min(1), name: z.string().min(1), arguments: z.string().nullable().optional() });

/** A failed response's `error` (or an error event) as the error it carries (its code the one the protocol's error table reads). */
export function responseError(error: unknown): ErrorBodyError | undefined {
  const words = serverWords(isRecord(error) && "error" in error ? error : { error });
  return words ? new ErrorBodyError(words) : undefined;
}

export function toLlmReply(body: unknown, requestedModel: string): Omit<LlmReply, "usage"> {
  // A failed response, or an error body in place of one (a gateway's), says why in `error`.
  if (isRecord(body) && (body.status === "failed" || !Array.isArray(body.output))) {
    const failed = responseError(body.error);
    if (failed) throw failed;
    if (body.status === "failed") throw new UnusableReplyError("the response failed without saying why");
  }
  const response = parsedReply(ResponseSchema, body, "a response");
  // The items as they came, not as the schema rebuilt them: a kept item goes back byte for byte, its keys in their order.
  const output = (body as { output: Record<string, unknown>[] }).output;
  const texts: string[] = [];
  const refusals: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const item of output) {
    if (item.type === "message") readMessage(item, texts, refusals);
    else if (item.type === "reasoning") reasoning.push(...reasoningTexts(item));
    else if (item.type === "function_call") toolCalls.push(toToolCall(item));
  }
  const refused = refusals.length > 0 && texts.length === 0 && toolCalls.length === 0;
  const content = refused ? refusals.join("") : texts.length > 0 ? texts.join("") : null;
  const finishReason = refused ? "refusal" : response.status === "incomplete" ? (response.incomplete_details?.reason ?? "incomplete") : (response.status ?? null);
  checkNotEmpty(content, toolCalls.length, finishReason, `status: ${response.status ?? "none"}`);
  const providerData: ResponsesProviderData | undefined = output.some(needsKeeping) ? { protocol: PROTOCOL, output: output.map(itemPlace) } : undefined;
  return {
    content,
    tool_calls: toolCalls,
    model: response.model || requestedModel,
    finish_reason: finishReason,
    ...(reasoning.length > 0 ? { reasoning: reasoning.join("\n\n") } : {}),
    ...(providerData ? { provider_data: providerData } : {}),
  };
}

/** output_text parts are the text; a refusal part is the model declining. */
function readMessage(item: Record<string, unknown>, texts: string[], refusals: string[]): void {
  for (const part of Array.isArray(item.content) ? item.content : []) {
    if (!isRecord(part)) continue;
    if (part.type === "output_text" && typeof part.text === "string") texts.push(part.text);
    else if (part.type === "refusal" && typeof part.refusal === "string") refusals.push(part.refusal);
  }
}

/** What a person may read of the reasoning: the summaries, and the reasoning text itself where a server shows it (open-weight models). */
function reasoningTexts(item: Record<string, unknown>): string[] {
  const parts = [...(Array.isArray(item.summary) ? item.summary : []), ...(Array.isArray(item.content) ? item.content : [])];
  return parts.filter((part): part is { text: string } => isRecord(part) && typeof part.text === "string" && part.text !== "").map((part) => part.text);
}

function toToolCall(item: Record<string, unknown>): ToolCall {
  const parsed = FunctionCallSchema.safeParse(item);
  if (!parsed.success) throw new UnusableReplyError("the response has a function_call without a call_id or a name");
  return { id: parsed.data.call_id, name: parsed.data.name, arguments: parsed.data.arguments ?? "{}" };
}
