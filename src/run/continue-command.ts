// The exact `delta continue` command line that resumes a run, quoted for a POSIX shell.
import shellQuote from "shell-quote";

/** `delta continue --run-id <id> -w <workspace>`, plus `-m <message>` when the run needs one (e.g. "<answer>"). */
export function continueCommand(runId: string, workDir: string, message?: string): string {
  return shellQuote.quote(["delta", "continue", "--run-id", runId, "-w", workDir, ...(message === undefined ? [] : ["-m", message])]);
}
