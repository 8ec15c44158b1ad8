// A Provider that answers with recorded replies instead of calling a model, so agents can be tested with no model and no key.
import { ContextOverflowError, ReplayError, type ContextOverflow } from "../errors.js";
import type { Provider } from "./types.js";
import type { LlmReply, LlmRequest } from "../conversation.js";
import { counted } from "../plural.js";

/** The replies a replay answers with, loaded by its caller (run/replay-source.ts): this room keeps no files. */
export interface Recording {
  /** A description of where the replies came from, for messages. */
  origin: string;
  /** How many replies it holds. */
  count: number;
  /** The reply to model call `index` (0-based, below count): a run directory's read from its record when asked, so one record is held at a time. */
  reply(index: number): LlmReply;
  /**
   * Model calls (0-based, as replies) the recorded run's server first refused as too long, with the
   * sizes it named: a replay refuses them once too, so the engine shrinks its window as it did.
   */
  overflows: Map<number, ContextOverflow>;
}

interface ReplayOptions {
  /**
   * The engine is stateless, so the position comes from the journal: pass the number of THOUGHT
   * events already recorded. Each call in this process then takes the next reply.
   */
  startIndex?: number;
}

export function createReplayProvider(recording: Recording, options: ReplayOptions = {}): Provider {
  const { origin, overflows } = recording;
  let next = options.startIndex ?? 0;
  const refused = new Set<number>();
  if (!Number.isInteger(next) || next < 0) throw new ReplayError(`The replay start index must be a whole number ≥ 0, got ${next}.`);
  return {
    name: "replay",
    async complete(request: LlmRequest): Promise<LlmReply> {
      const overflow = overflows.get(next);
      if (overflow && !refused.has(next)) {
        refused.add(next);
        throw new ContextOverflowError(`Recorded: the server refused model call ${next + 1} as longer than its context window (${origin}).`, overflow);
      }
      if (next >= recording.count) {
        throw new ReplayError(`No recorded reply for model call ${next + 1}: recording exhausted after ${counted(recording.count, "reply", "replies")} (${origin}).`);
      }
      const reply = recording.reply(next);
      checkToolsOffered(reply, request, next + 1, origin);
      next += 1;
      return reply;
    },
  };
}

function checkToolsOffered(reply: LlmReply, request: LlmRequest, position: number, origin: string): void {
  const offered = request.tools.map((tool) => tool.function.name);
  for (const call of reply.tool_calls) {
    if (!offered.includes(call.name)) {
      throw new ReplayError(
        `Recorded reply ${position} (${origin}) calls the tool "${call.name}", which this agent does not offer ` +
          `(offered: ${offered.length > 0 ? offered.join(", ") : "none"}); the recording no longer fits the agent.`,
      );
    }
  }
}
