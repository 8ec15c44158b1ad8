// The wrapper scripts that restore and save a session's state around one command.

/** Shells that can source the command and save `pwd` / `export -p` themselves; anything else is an interpreter. */
const STATE_KEEPING_SHELLS = new Set(["bash", "sh", "dash", "zsh", "ksh", "mksh", "ash"]);

type SessionKind = "shell" | "interpreter";

function sessionKind(argv: readonly string[]): SessionKind {
  const program = argv[0] ?? "";
  const base = program.slice(program.lastIndexOf("/") + 1);
  return STATE_KEEPING_SHELLS.has(base) ? "shell" : "interpreter";
}

/**
 * Run by the session's own shell as `<shell> -c SHELL_WRAPPER delta-session <state_dir> <command_file>`.
 * The command is sourced from a file (never interpolated); the EXIT trap saves state even after `exit N`.
 * Only builtins and `command -p mv` are used, so a command that breaks PATH cannot stop the save.
 */
const SHELL_WRAPPER = `__delta_state=$1
__delta_command=$2
shift 2
__delta_save() {
  __delta_status=$?
  trap - EXIT
  pwd > "$__delta_state/work_dir.txt.next" &&
    export -p > "$__delta_state/env.sh.next" &&
    command -p mv -f "$__delta_state/env.sh.next" "$__delta_state/env.sh" &&
    command -p mv -f "$__delta_state/work_dir.txt.next" "$__delta_state/work_dir.txt"
  exit "$__delta_status"
}
trap __delta_save EXIT
if [ -f "$__delta_state/env.sh" ]; then . "$__delta_state/env.sh"; fi
. "$__delta_command"
`;

/**
 * Run by /bin/sh as `sh -c INTERPRETER_WRAPPER delta-session <state_dir> <command_file> <argv…>`:
 * loads the saved environment, then feeds the command file to the interpreter's stdin.
 * With an empty command file argument it only checks the interpreter exists and saves the environment.
 */
const INTERPRETER_WRAPPER = `__delta_state=$1
__delta_command=$2
shift 2
if [ -f "$__delta_state/env.sh" ]; then . "$__delta_state/env.sh"; fi
if [ -z "$__delta_command" ]; then
  if ! command -v "$1" > /dev/null 2>&1; then
    echo "command not found: $1" >&2
    exit 127
  fi
  pwd > "$__delta_state/work_dir.txt" && export -p > "$__delta_state/env.sh"
  exit
fi
exec "$@" < "$__delta_command"
`;

/** The argv that runs one command file (or, with null, only captures the initial state) in a session. */
export function wrapperArgv(argv: readonly string[], stateDir: string, commandFile: string | null): string[] {
  if (sessionKind(argv) === "shell") {
    return [...argv, "-c", SHELL_WRAPPER, "delta-session", stateDir, commandFile ?? "/dev/null"];
  }
  return ["/bin/sh", "-c", INTERPRETER_WRAPPER, "delta-session", stateDir, commandFile ?? "", ...argv];
}
