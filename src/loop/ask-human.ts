// The built-in ask_human tool: asks on the terminal with -i, otherwise pauses the run for a human.
import { z } from "zod";
import type { ToolCall } from "../journal/events.js";
import type { FunctionTool } from "../conversation.js";
import type { HumanQuestion, InteractionRequest, LoopJournal, LoopPorts } from "./ports.js";

export const ASK_HUMAN = "ask_human";

export const ASK_HUMAN_TOOL: FunctionTool = {
  type: "function",
  function: {
    name: ASK_HUMAN,
    description: "Request input from human user. Execution pauses until response received.",
    parameters: {
      type: "object",
      properties: {
        prompt: { type: "string", description: "Question or instruction to display to user" },
        input_type: { type: "string", enum: ["text", "password", "confirmation"], description: "Input type: text | password | confirmation" },
        sensitive: { type: "boolean", description: "Whether input is sensitive (should hide input characters)" },
      },
      required: ["prompt"],
      additionalProperties: false,
    },
  },
};

const AskHumanArgsSchema = z.strictObject({
  prompt: z.string().min(1),
  input_type: z.enum(["text", "password", "confirmation"]).default("text"),
  sensitive: z.boolean().optional(),
});

/** The model's arguments as a question, or the reason they are unusable. */
export function parseAskHumanArgs(args: unknown): HumanQuestion | string {
  const parsed = AskHumanArgsSchema.safeParse(args);
  if (!parsed.success) {
    return `ask_human needs {"prompt": string, "input_type"?: "text"|"password"|"confirmation", "sensitive"?: boolean}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "arguments"}: ${i.message}`).join("; ")}`;
  }
  const { prompt, input_type, sensitive } = parsed.data;
  return { prompt, input_type, sensitive: sensitive ?? input_type === "password" };
}

/** The question as interaction/request.json shows it, recorded in the journal. */
export function openQuestion(ports: LoopPorts, call: ToolCall, iteration: number, question: HumanQuestion): InteractionRequest {
  const request: InteractionRequest = {
    request_id: globalThis.crypto.randomUUID(),
    timestamp: new Date().toISOString(),
    run_id: ports.settings.runId,
    action_id: call.id,
    ...question,
  };
  ports.journal.append({
    type: "HUMAN_INPUT_REQUEST",
    iteration,
    action_id: call.id,
    request_id: request.request_id,
    prompt: question.prompt,
    input_type: question.input_type,
    sensitive: question.sensitive,
  });
  return request;
}

/** Records the human's answer as HUMAN_INPUT_RECEIVED followed by the ask_human ACTION_RESULT. */
export function recordAnswer(journal: Pick<LoopJournal, "append">, request: { iteration: number; action_id: string; request_id: string }, answer: string, startedAt: number): void {
  journal.append({
    type: "HUMAN_INPUT_RECEIVED",
    iteration: request.iteration,
    action_id: request.action_id,
    request_id: request.request_id,
    response: answer,
  });
  recordAnswerResult(journal, request, answer, Math.max(0, Date.now() - startedAt));
}

/** The ask_human ACTION_RESULT for a recorded answer; also how resume completes an answer whose result a crash cut off. */
export function recordAnswerResult(journal: Pick<LoopJournal, "append">, request: { iteration: number; action_id: string }, answer: string, durationMs: number): void {
  journal.append({
    type: "ACTION_RESULT",
    iteration: request.iteration,
    action_id: request.action_id,
    tool_name: ASK_HUMAN,
    status: "SUCCESS",
    observation_content: answer,
    exit_code: 0,
    duration_ms: durationMs,
  });
}
