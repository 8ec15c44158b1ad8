// The only door to the terminal: stdout carries results, stderr carries everything else.
export interface CliIo {
  /** Result data for the chosen format; nothing else may go here. */
  out(text: string): void;
  /** Progress, warnings, the Think-Act-Observe stream and instructions to a human. */
  err(text: string): void;
}

export const processIo: CliIo = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
};
