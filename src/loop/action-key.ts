// A tool call's identity as the tool sees it: DELTA_ACTION_ID and DELTA_IDEMPOTENCY_KEY, the same on every attempt of the call, a re-run after a crash included.
import type { ToolCall } from "../journal/events.js";

export interface ActionKey {
  /** The call id the model's reply gave it: the journal's action_id. */
  actionId: string;
  /** `<run_id>:<iteration>:<action_id>`; a reply that repeats a call id gives its second call `…#2`, its third `…#3`. */
  key: string;
}

/** A call id longer than this is refused before anything runs: the key must fit an environment variable and a log line. */
const MAX_CALL_ID_CHARS = 256;

/**
 * The key of the call at `index` of a THOUGHT's tool calls. Providers reuse call ids across
 * iterations (some number them `0`, `1`…), so the iteration is part of it; the run id makes it
 * unique across runs.
 */
export function actionKey(runId: string, iteration: number, toolCalls: readonly ToolCall[], index: number): ActionKey {
  const call = toolCalls[index];
  if (call === undefined) throw new Error(`no tool call ${index} in iteration ${iteration}`);
  let occurrence = 1;
  for (let before = 0; before < index; before += 1) {
    if (toolCalls[before]!.id === call.id) occurrence += 1;
  }
  const key = `${runId}:${iteration}:${call.id}${occurrence === 1 ? "" : `#${occurrence}`}`;
  return { actionId: call.id, key };
}

/** The variables a tool process, and a hook about the call, get. */
export function actionEnv(key: ActionKey): { DELTA_ACTION_ID: string; DELTA_IDEMPOTENCY_KEY: string } {
  return { DELTA_ACTION_ID: key.actionId, DELTA_IDEMPOTENCY_KEY: key.key };
}

/** Why a call id cannot be handed to a tool (too long, or a control character no environment can carry), or null. */
export function callIdProblem(id: string): string | null {
  if (id.length > MAX_CALL_ID_CHARS) return `its call id is ${id.length} characters long; at most ${MAX_CALL_ID_CHARS} can be handed to a tool as DELTA_ACTION_ID`;
  if (/[\u0000-\u001f\u007f]/.test(id)) return `its call id ${JSON.stringify(id)} holds a control character, which cannot be handed to a tool as DELTA_ACTION_ID`;
  return null;
}
