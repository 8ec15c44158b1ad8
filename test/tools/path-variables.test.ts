import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { expandArgvPathVariables, shellScriptIndex } from "../../src/tools/path-variables.js";

const HOSTILE = { AGENT_HOME: "/agents/a;touch PWNED;x", CWD: "/ws/$(touch PWNED) 'q' \"d\"" };

/** Runs the expanded argv with the paths in the environment, as tools, hooks and generators get them. */
function run(argv: string[]): string {
  const [program, ...args] = expandArgvPathVariables(argv, HOSTILE);
  return execFileSync(program ?? "", args, { cwd: "/", env: { PATH: process.env.PATH, DELTA_AGENT_HOME: HOSTILE.AGENT_HOME, DELTA_CWD: HOSTILE.CWD }, encoding: "utf8" });
}

describe("expandArgvPathVariables", () => {
  it("puts the paths into plain arguments as text, one argument each, and leaves other ${…} alone", () => {
    expect(expandArgvPathVariables(["tool", "${CWD}/x", "--home=${AGENT_HOME}", "${HOME}", "$CWD"], HOSTILE)).toEqual([
      "tool",
      `${HOSTILE.CWD}/x`,
      `--home=${HOSTILE.AGENT_HOME}`,
      "${HOME}",
      "$CWD",
    ]);
  });

  it("turns them into variable references in a shell script, quoted for where they sit", () => {
    const [, , script] = expandArgvPathVariables(["sh", "-c", `cd \${CWD} && echo "in \${CWD}/x" '\${AGENT_HOME}' \${HOME:-/}`], HOSTILE);
    expect(script).toBe(`cd "\${DELTA_CWD}" && echo "in \${DELTA_CWD}/x" ''"\${DELTA_AGENT_HOME}"'' \${HOME:-/}`);
  });

  it("gives the script the exact paths and runs nothing they hold, unquoted, in quotes and in single quotes", () => {
    expect(run(["sh", "-c", "printf '%s\\n' ${CWD} \"${CWD}\" '${AGENT_HOME}' \"$(printf %s ${AGENT_HOME})\""])).toBe(
      `${HOSTILE.CWD}\n${HOSTILE.CWD}\n${HOSTILE.AGENT_HOME}\n${HOSTILE.AGENT_HOME}\n`,
    );
  });

  it("expands the arguments after the script as text: they are $0, $1…, not code", () => {
    expect(run(["bash", "-c", 'printf "%s|" "$0" "$1"', "${CWD}", "${AGENT_HOME}"])).toBe(`${HOSTILE.CWD}|${HOSTILE.AGENT_HOME}|`);
  });

  it("falls back to bare references when the script's quotes cannot be followed, which is never code either", () => {
    const [, , script] = expandArgvPathVariables(["sh", "-c", "echo ${CWD} # it's here"], HOSTILE);
    expect(script).toBe("echo ${DELTA_CWD} # it's here");
  });

  it("leaves entries that are not the template's own text untouched", () => {
    expect(expandArgvPathVariables(["sh", "-c", "${CWD}"], HOSTILE, (index) => index < 2)).toEqual(["sh", "-c", "${CWD}"]);
  });
});

describe("shellScriptIndex", () => {
  it.each([
    [["sh", "-c", "s"], 2],
    [["/bin/bash", "-lc", "s", "name", "arg"], 2],
    [["bash", "-e", "-o", "pipefail", "-c", "s"], 5],
    [["dash", "-c", "--", "s"], 3],
    [["/usr/bin/env", "-u", "X", "A=1", "bash", "--norc", "-c", "s"], 7],
    [["sh", "script.sh", "${CWD}"], -1],
    [["sh", "-c"], -1],
    [["python3", "-c", "s"], -1],
    [["node", "-e", "s"], -1],
  ])("finds the script of %j at %i", (argv, index) => {
    expect(shellScriptIndex(argv)).toBe(index);
  });
});
