import { describe, expect, it } from "vitest";
import { boundEnvValue, buildHookEnv, ENV_VALUE_MAX_BYTES, expandHookCommand, hookStdin } from "../../src/hooks/hook-env.js";

const facts = {
  agentHome: "/agents/a",
  cwd: "/ws/W001",
  runId: "r1",
  runDir: "/ws/W001/.delta/r1",
  journalPath: "/ws/W001/.delta/r1/journal.jsonl",
  iteration: 7,
};

describe("expandHookCommand", () => {
  it("replaces every ${AGENT_HOME} and ${CWD} and leaves other dollar text alone", () => {
    expect(expandHookCommand(["${AGENT_HOME}/h.sh", "${CWD}:${CWD}", "$AGENT_HOME", "${HOME}"], facts)).toEqual([
      "/agents/a/h.sh",
      "/ws/W001:/ws/W001",
      "$AGENT_HOME",
      "${HOME}",
    ]);
  });
});

describe("boundEnvValue", () => {
  it("keeps a value within the limit unchanged", () => {
    expect(boundEnvValue("short result")).toBe("short result");
  });

  it("cuts a long value to the byte limit on a character boundary and marks the cut", () => {
    const value = "é".repeat(ENV_VALUE_MAX_BYTES);
    const bounded = boundEnvValue(value);
    expect(Buffer.byteLength(bounded, "utf8")).toBeLessThanOrEqual(ENV_VALUE_MAX_BYTES);
    expect(bounded).toMatch(/^é+\n\[truncated: the full text is in the stdin payload\]$/);
  });

  it("drops NUL characters, which an environment cannot carry", () => {
    expect(boundEnvValue("a\0b")).toBe("ab");
  });
});

describe("buildHookEnv", () => {
  it("adds the run variables to the parent's environment and sets hook-specific ones only when given", () => {
    const env = buildHookEnv({ ...facts, toolName: "ls" }, { PATH: "/bin", ERROR_MESSAGE: "stale", UNSET: undefined });
    expect(env).toEqual({
      PATH: "/bin",
      RUN_DIR: facts.runDir,
      JOURNAL_PATH: facts.journalPath,
      ITERATION_COUNT: "7",
      DELTA_RUN_ID: "r1",
      DELTA_AGENT_HOME: "/agents/a",
      DELTA_CWD: "/ws/W001",
      TOOL_NAME: "ls",
    });
  });
});

describe("hookStdin", () => {
  it("is one JSON object with hook, run_id, iteration and payload, null when the payload is missing", () => {
    expect(JSON.parse(hookStdin("on_run_end", "r1", 2, undefined))).toEqual({ hook: "on_run_end", run_id: "r1", iteration: 2, payload: null });
  });
});
