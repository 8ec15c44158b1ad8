// Puts a run's ask_human question to the MCP client's user as a form elicitation (elicitation/create): the answer, or why there is none.
import type { RunResult } from "../run/run-result.js";
import type { ElicitRequestFormParams, ElicitResult } from "./sdk.js";

/** The question as a WAITING_FOR_INPUT RunResult carries it in `interaction`. */
export type Question = NonNullable<RunResult["interaction"]>;

/** What came of asking: an answer to continue the run with, or why the run stays WAITING_FOR_INPUT. */
export type Elicited =
  | { action: "accept"; answer: string }
  | { action: "decline" | "cancel"; message: string }
  | { action: "not_asked" | "failed"; message: string };

/** Sends one elicitation/create request to the client and gives back its reply (rejects when the client errs, goes or times out). */
type SendElicitation = (params: ElicitRequestFormParams) => Promise<ElicitResult>;

const ANSWER_TOOL = "answer it with the answer tool";

export async function elicitAnswer(question: Question, send: SendElicitation): Promise<Elicited> {
  // The MCP specification forbids asking for passwords and other secrets through form elicitation.
  if (question.sensitive || question.input_type === "password") {
    return { action: "not_asked", message: `the question is sensitive, and MCP form elicitation must not ask for secrets: ${ANSWER_TOOL}` };
  }
  const yesNo = question.input_type === "confirmation";
  let reply: ElicitResult;
  try {
    reply = await send({
      mode: "form",
      message: question.prompt,
      requestedSchema: {
        type: "object",
        properties: { answer: yesNo ? { type: "boolean", title: "Yes", description: question.prompt } : { type: "string", title: "Answer", description: question.prompt } },
        required: ["answer"],
      },
    });
  } catch (err) {
    return { action: "failed", message: `asking the client failed (${err instanceof Error ? err.message : String(err)}): ${ANSWER_TOOL}` };
  }
  switch (reply.action) {
    case "accept": {
      const answer = reply.content?.answer;
      if (yesNo && typeof answer === "boolean") return { action: "accept", answer: answer ? "yes" : "no" };
      if (!yesNo && typeof answer === "string") return { action: "accept", answer };
      return { action: "failed", message: `the client accepted without ${yesNo ? "a boolean" : "a string"} 'answer': ${ANSWER_TOOL}` };
    }
    case "decline":
      return { action: "decline", message: `the user declined to answer: ${ANSWER_TOOL}` };
    case "cancel":
      return { action: "cancel", message: `the user dismissed the question: ${ANSWER_TOOL}` };
    default: {
      const unknown: never = reply.action;
      return { action: "failed", message: `the client replied '${String(unknown)}': ${ANSWER_TOOL}` };
    }
  }
}
