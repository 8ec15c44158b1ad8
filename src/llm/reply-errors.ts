// The ways a 2xx reply can fail to be a reply, whatever the protocol: unusable, or an error in place of a reply; and the checks every protocol's reading makes.
import type { z } from "zod";
import { replyEnding } from "../conversation.js";
import type { ServerWords } from "./server-words.js";

/** A reply that cannot be turned into an LlmReply; worth one more try, as gateways sometimes send one. */
export class UnusableReplyError extends Error {}

/** A 200 whose body (or stream) is an error, not a reply (OpenRouter, gateways, Anthropic's overloaded stream): the server's words and code. */
export class ErrorBodyError extends Error {
  constructor(readonly words: ServerWords) {
    super(words.message);
  }
}

/** The body read by `schema`, or an unusable reply naming what it is not (`what`: "a message") and the first field that failed. */
export function parsedReply<T>(schema: z.ZodType<T>, body: unknown, what: string): T {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new UnusableReplyError(`the reply is not ${what} (${issue ? `${issue.path.join(".") || "body"}: ${issue.message}` : "unreadable"})`);
}

/** A finished reply with neither text nor tool calls is unusable; one cut off or refused before any text is still a reply, the engine reports it as such. */
export function checkNotEmpty(content: string | null, toolCalls: number, finishReason: string | null, detail: string): void {
  if (content === null && toolCalls === 0 && replyEnding(finishReason) === "finished") throw new UnusableReplyError(`the reply has neither content nor tool calls (${detail})`);
}

/** One stream event's data as JSON, or null when it is not JSON: for a live view, which ignores what it cannot read. */
export function eventJsonOrNull(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return null;
  }
}

/** One stream event's data as JSON, or an unusable reply quoting its start. */
export function eventJson(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    throw new UnusableReplyError(`the stream sent an event that is not JSON (${JSON.stringify(data.slice(0, 80))})`);
  }
}
