// The exact `delta continue` command line that resumes a run, quoted for a POSIX shell so that it can be pasted as printed.

/**
 * `delta continue --run-id <id> -w <workspace>`, then the options the run was driven with that it needs again
 * (`--replay <source>`), and `-m <message>` when the run needs one (e.g. "<answer>", printed as '<answer>').
 */
export function continueCommand(runId: string, workDir: string, message?: string, options: readonly string[] = []): string {
  return ["delta", "continue", "--run-id", runId, "-w", workDir, ...options, ...(message === undefined ? [] : ["-m", message])].map(shellWord).join(" ");
}

/** A word as typed: bare when it holds nothing a shell treats specially, else in single quotes (which a person edits inside). */
function shellWord(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, "'\\''")}'`;
}
