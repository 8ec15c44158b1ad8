// Freezes an earlier run's replies into a .jsonl recording (one reply a line) for tests that replay it from a file; no command exports recordings, so this lives with the tests.
import { loadRecording } from "../../src/llm/replay-source.js";

export function exportReplies(runDir: string): string {
  return loadRecording(runDir).replies.map((reply) => `${JSON.stringify(reply)}\n`).join("");
}
