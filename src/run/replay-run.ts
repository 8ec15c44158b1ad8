// What a checked replay (--until-divergence, --replay-strict) is told of the run it answers: the run's facts, and the journal a divergence is recorded in before the call goes anywhere.
import type { JournalEvent, NewEvent } from "../journal/events.js";
import { describeReplayDivergence } from "../journal/replay-divergence.js";
import type { RunState } from "../journal/run-state.js";
import type { ReplayRun } from "../llm/replay.js";

interface ReplayedRun {
  runId: string;
  workDir: string;
  agentHome: string;
  /** What the run keeps out of its files: its requests are compared as their records hold them. */
  secrets: readonly string[];
  /** The recording, as --replay named it. */
  source: string | undefined;
}

interface RunJournal {
  append(event: NewEvent): JournalEvent;
  runState(): RunState;
}

export function replayRun(run: ReplayedRun, journal: RunJournal, say: { log(line: string): void; progress(line: string): void }): ReplayRun {
  return {
    facts: { runIds: [run.runId], workDir: run.workDir, agentHome: run.agentHome, secrets: run.secrets },
    diverged(divergence) {
      const event = {
        type: "REPLAY_DIVERGED" as const,
        // The call being made is the next iteration's: the journal holds a THOUGHT for each one made.
        iteration: journal.runState().iterations + 1,
        recorded_call: divergence.recordedCall,
        source: run.source ?? "",
        parts: divergence.parts.map(({ part, summary }) => ({ part, summary })),
        then: divergence.then,
      };
      journal.append(event);
      const line = describeReplayDivergence(event);
      say.log(`replay: ${line}`);
      say.progress(`[${event.iteration}] replay: ${line}`);
    },
  };
}
