// Freezes an earlier run's replies into a .jsonl recording (one reply a line) for tests that replay it from a file; no command exports recordings, so this lives with the tests.
import { loadRecording } from "../../src/run/replay-source.js";

export function exportReplies(runDir: string): string {
  const recording = loadRecording(runDir);
  return Array.from({ length: recording.count }, (_, index) => `${JSON.stringify(recording.reply(index))}\n`).join("");
}
