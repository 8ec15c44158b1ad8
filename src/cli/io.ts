// The only door to the terminal: stdout carries results, stderr carries everything else. Text goes out through the one control-sequence stripper; only data a program parses goes out as it is.
import { terminalSafe } from "../terminal-text.js";
export interface CliIo {
  /** The text path: a result for a person (--format text, listings, tables). Every control sequence in it is shown as a visible escape. */
  out(text: string): void;
  /**
   * The data path: bytes a program parses, written as they are — JSON and JSONL (which escape control characters
   * themselves), raw results piped, HTML, a schema file — and `show`'s coloured account, whose every piece from a run
   * passed the stripper before the engine coloured it.
   */
  data(text: string): void;
  /** Progress, warnings, the Think-Act-Observe stream and instructions to a human; control sequences are neutralised here. */
  err(text: string): void;
}

/** Whether text on stdout may be coloured: a terminal, and NO_COLOR unset. */
export function stdoutWantsColour(): boolean {
  return Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
}

export const processIo: CliIo = {
  out: (text) => void process.stdout.write(terminalSafe(text)),
  data: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(terminalSafe(text)),
};
