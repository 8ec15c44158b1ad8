// Reads what a post_llm_response hook returned: an annotation to record, never a rewrite of the reply.
import { isDeepStrictEqual } from "node:util";
import type { LlmReply } from "../conversation.js";

export type ResponseAnnotation = string | Record<string, unknown>;

export interface PostResponseReading {
  /** `output.annotation` when it is a string or an object; the engine records it. */
  annotation?: ResponseAnnotation;
  /** Set when the hook tried something the engine ignores (changing the reply, an annotation of the wrong type). */
  warning?: string;
}

/** Fields through which a hook might try to replace the reply; they are ignored unless they equal the original. */
const REPLY_FIELDS = ["content", "tool_calls"] as const;

/**
 * A post_llm_response hook may annotate a reply but not change it: the reply is what the model said,
 * and the journal must record exactly that. Attempts to change `content`, `tool_calls` or `payload` are
 * ignored with a warning; echoing them back unchanged (as a hook that copies its stdin would) is fine.
 */
export function validatePostResponseAnnotation(reply: LlmReply, output: Record<string, unknown> | undefined): PostResponseReading {
  if (output === undefined) return {};
  const warnings: string[] = [];
  // Compare with the reply as the hook saw it on stdin: JSON, where undefined fields vanish.
  const seen = JSON.parse(JSON.stringify(reply)) as Record<string, unknown>;
  const changed: string[] = REPLY_FIELDS.filter((field) => field in output && !isDeepStrictEqual(output[field], seen[field]));
  if ("payload" in output && !isDeepStrictEqual(output.payload, seen)) changed.push("payload");
  if (changed.length > 0) {
    warnings.push(`post_llm_response hook output tries to change the reply (${changed.join(", ")}); a hook may annotate a reply but not rewrite it, so this is ignored`);
  }
  const reading: PostResponseReading = {};
  const annotation = output.annotation;
  if (typeof annotation === "string" || isPlainObject(annotation)) {
    reading.annotation = annotation;
  } else if (annotation !== undefined) {
    warnings.push(`post_llm_response hook "annotation" must be a string or an object, got ${annotation === null ? "null" : Array.isArray(annotation) ? "an array" : typeof annotation}; it is ignored`);
  }
  if (warnings.length > 0) reading.warning = warnings.join("; ");
  return reading;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
