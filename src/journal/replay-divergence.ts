// One line saying where and why a replay stopped matching its recording (REPLAY_DIVERGED): the one wording of stderr, engine.log, show and the HTML report.
import type { EventOf } from "./events.js";

/** What a divergence says, as journaled or about to be. */
export function describeReplayDivergence(event: Omit<EventOf<"REPLAY_DIVERGED">, "seq" | "timestamp">): string {
  const why = event.parts.length === 0 ? `the recording has no model call ${event.recorded_call}` : event.parts.map((part) => part.summary).join("; ");
  const then = event.then === "live" ? "the model is asked from here on (--until-divergence)" : "the run stops (--replay-strict)";
  return `the request of iteration ${event.iteration} differs from the recording's call ${event.recorded_call} (${why}); ${then}`;
}
