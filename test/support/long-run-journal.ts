// Writes a long run's journal as the engine writes it with `max_iterations: 10`: tool-calling iterations with large results, a CONTEXT_WINDOW every ten.
import { closeSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { EventOf, JournalEvent, NewEvent } from "../../src/journal/events.js";
import { delta, modelEnv, readEvents, runDir, tempDir, writeAgent } from "../e2e/harness.js";

/**
 * Rewrites the journal at `path` as a COMPLETED run of `iterations` echo calls of `resultBytes` each that moved its window
 * every ten, opening with a real run's ENGINE_START and USER_MESSAGE; returns the journal's bytes.
 */
export function writeLongRun(path: string, [start, message]: JournalEvent[], iterations: number, resultBytes: number): number {
  const fd = openSync(path, "w", 0o600);
  let seq = 0;
  let bytes = 0;
  const put = (event: JournalEvent | NewEvent): void => {
    seq += 1;
    bytes += writeSync(fd, `${JSON.stringify({ ...event, seq, timestamp: start!.timestamp })}\n`);
  };
  try {
    put(start!);
    put(message!);
    let first = 1;
    for (let n = 1; n <= iterations; n += 1) {
      if (n - first >= 10) {
        put({ type: "CONTEXT_WINDOW", iteration: n, reason: "max_iterations", first_iteration: n - 5, dropped_from: first, dropped_to: n - 6, limit: 10 });
        first = n - 5;
      }
      const id = `call_${n}`;
      put({ type: "THOUGHT", iteration: n, content: null, tool_calls: [{ id, name: "echo", arguments: JSON.stringify({ text: `page ${n}` }) }], usage: { input_tokens: 900, output_tokens: 20 }, model: "mock-model" });
      put({ type: "ACTION_REQUEST", iteration: n, action_id: id, tool_name: "echo", tool_args: { text: `page ${n}` }, resolved_command: ["echo", `page ${n}`] });
      put({ type: "ACTION_RESULT", iteration: n, action_id: id, tool_name: "echo", status: "SUCCESS", observation_content: `page ${n} `.padEnd(resultBytes, "."), exit_code: 0, duration_ms: 1 });
    }
    put({ type: "ENGINE_END", run_id: (start as EventOf<"ENGINE_START">).run_id, status: "COMPLETED", final_iteration: iterations });
  } finally {
    closeSync(fd);
  }
  return bytes;
}

/**
 * A real run "long" of an agent whose context keeps 10 iterations, its journal then rewritten by writeLongRun: the
 * temporary root, the workspace and the journal's bytes.
 */
export async function prepareLongRun(modelUrl: string, iterations: number, resultBytes: number): Promise<{ root: string; ws: string; journalBytes: number }> {
  const root = tempDir();
  const ws = join(root, "ws");
  const home = writeAgent(root, { contextYaml: "sources:\n  - type: file\n    path: '${AGENT_HOME}/system_prompt.md'\n  - type: journal\n    max_iterations: 10\n" });
  const run = await delta(["run", "--agent", home, "-w", ws, "--run-id", "long", "-m", "read every page"], { env: modelEnv(modelUrl) });
  if (run.exitCode !== 0) throw new Error(`the run to grow exited ${run.exitCode}: ${run.stderr}`);
  return { root, ws, journalBytes: writeLongRun(join(runDir(ws, "long"), "journal.jsonl"), readEvents(ws, "long"), iterations, resultBytes) };
}
