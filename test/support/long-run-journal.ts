// Writes a long run's journal as the engine writes it with `max_iterations: 10`: tool-calling iterations with large results, a CONTEXT_WINDOW every ten.
import { closeSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { beforeAll } from "vitest";
import type { EventOf, JournalEvent, NewEvent } from "../../src/journal/events.js";
import { delta, modelEnv, readEvents, runDir, setUpE2e, writeAgent } from "../e2e/harness.js";
import { reply, type MockLlm } from "./mock-llm.js";

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

/** The long run of setUpLongRun: 5,000 iterations of 16 KB results, three times the heap its commands are given. */
export const LONG_RUN = { iterations: 5_000, resultBytes: 16_384, heapMb: 24 } as const;

export interface LongRun {
  readonly ws: string;
  readonly journalBytes: number;
  /** Answers every request with one final text. */
  readonly server: MockLlm;
  /** The environment of a command over the run: the model, a heap of LONG_RUN.heapMb, and `extra`. */
  heapCapped(extra?: Record<string, string>): Record<string, string>;
}

/** A test file's long run "long" (LONG_RUN), made once before its tests; gone with the file's e2e folder. */
export function setUpLongRun(): LongRun {
  const { root, serve } = setUpE2e("delta-long-run-");
  let made: { ws: string; journalBytes: number; server: MockLlm } | undefined;
  beforeAll(async () => {
    const server = await serve(() => reply.text("the last page is read"));
    made = { server, ...(await prepareLongRun(root, server.baseUrl, LONG_RUN.iterations, LONG_RUN.resultBytes)) };
  }, 60_000);
  const get = () => {
    if (made === undefined) throw new Error("the long run is made before the file's first test");
    return made;
  };
  return {
    get ws() {
      return get().ws;
    },
    get journalBytes() {
      return get().journalBytes;
    },
    get server() {
      return get().server;
    },
    heapCapped: (extra = {}) => modelEnv(get().server.baseUrl, { NODE_OPTIONS: `--max-old-space-size=${LONG_RUN.heapMb}`, ...extra }),
  };
}

/**
 * A real run "long" under `root` of an agent whose context keeps 10 iterations, its journal then rewritten by
 * writeLongRun: the workspace and the journal's bytes.
 */
async function prepareLongRun(root: string, modelUrl: string, iterations: number, resultBytes: number): Promise<{ ws: string; journalBytes: number }> {
  const ws = join(root, "ws");
  const home = writeAgent(root, { contextYaml: "sources:\n  - type: file\n    path: '${AGENT_HOME}/system_prompt.md'\n  - type: journal\n    max_iterations: 10\n" });
  const run = await delta(["run", "--agent", home, "-w", ws, "--run-id", "long", "-m", "read every page"], { env: modelEnv(modelUrl) });
  if (run.exitCode !== 0) throw new Error(`the run to grow exited ${run.exitCode}: ${run.stderr}`);
  return { ws, journalBytes: writeLongRun(join(runDir(ws, "long"), "journal.jsonl"), readEvents(ws, "long"), iterations, resultBytes) };
}
