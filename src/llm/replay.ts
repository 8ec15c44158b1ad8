// A Provider that answers with recorded replies instead of calling a model, so agents can be tested with no model and no key; checked, it compares each request with the recorded one first.
import { ContextOverflowError, ReplayDivergedError, ReplayError, type ContextOverflow } from "../errors.js";
import type { CallOptions, Provider } from "./types.js";
import type { LlmReply, LlmRequest } from "../conversation.js";
import { counted } from "../plural.js";
import { compareRequests, type PartDifference, type RunFacts } from "./request-equality.js";

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
  /** A run folder's requests, which a checked replay compares each call's with; a replies file has none. */
  requests?: RecordedRequests;
}

interface RecordedRequests {
  /** What the recorded run's requests are normalized by. */
  facts: RunFacts;
  /** The request of model call `index` (0-based, below the recording's count). */
  request(index: number): LlmRequest;
}

/** --until-divergence: recorded replies while each request equals the recorded one, then the live model; --replay-strict: the run stops there instead. */
export type ReplayCheckMode = "until-divergence" | "strict";

/** The first call whose request is not the recorded one. */
export interface Divergence {
  /** The recording's model call it was compared with, from 1. */
  recordedCall: number;
  /** The parts that differ; none when the recording has no such call. */
  parts: PartDifference[];
  then: "live" | "stopped";
}

/** What the run tells a checked replay: its own facts, and where a divergence is journaled. */
export interface ReplayRun {
  facts: RunFacts;
  /** Told once, before the call that diverged goes anywhere. */
  diverged(divergence: Divergence): void;
}

interface ReplayCheck {
  mode: ReplayCheckMode;
  /** --until-divergence: the model every call from the first that differs on goes to. */
  live: Provider | null;
  run: ReplayRun;
}

interface ReplayOptions {
  /**
   * The engine is stateless, so the position comes from the journal: pass the number of THOUGHT
   * events already recorded. Each call in this process then takes the next reply.
   */
  startIndex?: number;
  /** Each request checked against the recorded one before its reply is played. */
  check?: ReplayCheck;
}

export function createReplayProvider(recording: Recording, options: ReplayOptions = {}): Provider {
  const { origin, overflows } = recording;
  const { check } = options;
  let next = options.startIndex ?? 0;
  let live: Provider | null = null;
  const refused = new Set<number>();
  if (!Number.isInteger(next) || next < 0) throw new ReplayError(`The replay start index must be a whole number ≥ 0, got ${next}.`);
  if (check && recording.requests === undefined) throw new ReplayError(`${origin} holds replies only, not the requests they answered, so no request can be checked against it.`);
  if (check?.mode === "until-divergence" && check.live === null) throw new ReplayError("--until-divergence needs a model to go on with once a request differs.");
  return {
    name: "replay",
    async complete(request: LlmRequest, callOptions?: CallOptions): Promise<LlmReply> {
      if (live) return live.complete(request, callOptions);
      const overflow = overflows.get(next);
      if (overflow && !refused.has(next)) {
        refused.add(next);
        throw new ContextOverflowError(`Recorded: the server refused model call ${next + 1} as longer than its context window (${origin}).`, overflow);
      }
      if (check) {
        const divergence = divergenceAt(recording, next, request, check);
        if (divergence) {
          check.run.diverged(divergence);
          if (divergence.then === "stopped") throw new ReplayDivergedError(divergedMessage(divergence, origin));
          live = check.live!;
          return live.complete(request, callOptions);
        }
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

/** Null while the request equals the recorded one of call `index`; a call the recording does not have differs too. */
function divergenceAt(recording: Recording, index: number, request: LlmRequest, check: ReplayCheck): Divergence | null {
  const then = check.mode === "strict" ? "stopped" : "live";
  if (index >= recording.count) return { recordedCall: index + 1, parts: [], then };
  // The recording is side a, this run side b: a change reads "before → now".
  const parts = compareRequests({ request: recording.requests!.request(index), facts: recording.requests!.facts }, { request, facts: check.run.facts });
  return parts.length === 0 ? null : { recordedCall: index + 1, parts, then };
}

function divergedMessage(divergence: Divergence, origin: string): string {
  const why = divergence.parts.length === 0 ? `the recording has no model call ${divergence.recordedCall}` : divergence.parts.map((part) => part.summary).join("; ");
  return (
    `The request of model call ${divergence.recordedCall} differs from the recording (${why}); --replay-strict stops here, with no model called (${origin}). ` +
    "To see each change line by line, replay the recording without the check and `delta diff` the recorded run and that one; if the change is meant, record the run again."
  );
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
