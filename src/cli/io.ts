// The only door to the terminal: stdout carries results, stderr carries everything else, with no control sequence left in it.
import { terminalSafe } from "../terminal-text.js";
export interface CliIo {
  /** Result data for the chosen format; nothing else may go here. */
  out(text: string): void;
  /** Progress, warnings, the Think-Act-Observe stream and instructions to a human; control sequences are neutralised here. */
  err(text: string): void;
}

/** Whether text on stdout may be coloured: a terminal, and NO_COLOR unset. */
export function stdoutWantsColour(): boolean {
  return Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
}

export const processIo: CliIo = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(terminalSafe(text)),
};
