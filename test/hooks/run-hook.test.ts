import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runHook, type HookContext, type HookRecord } from "../../src/hooks/run-hook.js";
import { HookRecordSchema } from "../../src/hooks/types.js";
import { waitFor } from "../e2e/harness.js";
import { diesSoon, writeExecutable } from "../support/processes.js";
import type { HookName, HooksConfig } from "../../src/hooks/schema.js";
import { inheritedEnv } from "../support/inherited-env.js";

let root: string;
let agentHome: string;
let workspace: string;
let records: { name: HookName; record: HookRecord }[];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "delta-hooks-"));
  agentHome = join(root, "agent");
  workspace = join(root, "workspace");
  await mkdir(join(agentHome, "hooks"), { recursive: true });
  await mkdir(workspace);
  records = [];
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function context(overrides: Partial<HookContext> = {}): HookContext {
  return {
    agentHome,
    cwd: workspace,
    runId: "run-1",
    runDir: join(workspace, ".delta", "run-1"),
    journalPath: join(workspace, ".delta", "run-1", "journal.jsonl"),
    iteration: 3,
    record: (name, record) => records.push({ name, record }),
    baseEnv: inheritedEnv,
    ...overrides,
  };
}

/** Writes an executable sh script into the agent's hooks/ folder and returns its path. */
async function script(name: string, body: string): Promise<string> {
  const path = join(agentHome, "hooks", name);
  writeExecutable(path, `#!/bin/sh\n${body}\n`);
  return path;
}

function hooks(name: HookName, command: string[], timeout_ms = 5_000): HooksConfig {
  return { [name]: { command, timeout_ms } };
}

describe("runHook", () => {
  it("returns none and runs nothing when no hook is configured for the point", async () => {
    const outcome = await runHook({}, { name: "pre_tool_execution", payload: {} }, context());
    expect(outcome).toEqual({ kind: "none" });
    expect(records).toHaveLength(0);
  });

  it("continues when the hook exits 0 and returns a JSON object on stdout as output", async () => {
    const path = await script("ok.sh", `echo '{"payload": {"messages": []}, "note": "hi"}'`);
    const outcome = await runHook(hooks("pre_llm_request", [path]), { name: "pre_llm_request", payload: {} }, context());
    expect(outcome).toEqual({ kind: "continue", output: { payload: { messages: [] }, note: "hi" } });
  });

  it("continues without output when exit 0 prints plain text", async () => {
    const path = await script("text.sh", "echo all good");
    const outcome = await runHook(hooks("on_iteration_start", [path]), { name: "on_iteration_start", payload: {} }, context());
    expect(outcome).toEqual({ kind: "continue" });
  });

  it("blocks with the reason given in a JSON block decision", async () => {
    const path = await script("deny.sh", `echo '{"decision": "block", "reason": "rm is not allowed"}'`);
    const outcome = await runHook(hooks("pre_tool_execution", [path]), { name: "pre_tool_execution", payload: {} }, context());
    expect(outcome).toEqual({ kind: "block", reason: "rm is not allowed" });
  });

  it("blocks with a default reason when a JSON block decision has none", async () => {
    const path = await script("deny.sh", `echo '{"decision": "block"}'`);
    const outcome = await runHook(hooks("pre_tool_execution", [path]), { name: "pre_tool_execution", payload: {} }, context());
    expect(outcome).toEqual({ kind: "block", reason: "blocked by pre_tool_execution hook" });
  });

  it("blocks on exit 2 with the trimmed stderr as the reason", async () => {
    const path = await script("exit2.sh", `echo "  path outside workspace  " >&2\nexit 2`);
    const outcome = await runHook(hooks("pre_tool_execution", [path]), { name: "pre_tool_execution", payload: {} }, context());
    expect(outcome).toEqual({ kind: "block", reason: "path outside workspace" });
  });

  it("blocks on exit 2 with stdout as the reason when stderr is empty", async () => {
    const path = await script("exit2.sh", `echo "from stdout"\nexit 2`);
    const outcome = await runHook(hooks("pre_tool_execution", [path]), { name: "pre_tool_execution", payload: {} }, context());
    expect(outcome).toEqual({ kind: "block", reason: "from stdout" });
  });

  it("fails closed when a pre hook exits with another code, naming the code and stderr", async () => {
    const path = await script("crash.sh", `echo "validator exploded" >&2\nexit 3`);
    const outcome = await runHook(hooks("pre_tool_execution", [path]), { name: "pre_tool_execution", payload: {} }, context());
    expect(outcome).toEqual({ kind: "block", reason: "pre_tool_execution hook failed: exit 3: validator exploded" });
  });

  it("fails open with a warning when a post hook crashes", async () => {
    const path = await script("crash.sh", `echo "logger down" >&2\nexit 1`);
    const outcome = await runHook(hooks("post_tool_execution", [path]), { name: "post_tool_execution", payload: {} }, context());
    expect(outcome).toEqual({ kind: "continue", warning: "post_tool_execution hook failed: exit 1: logger down" });
  });

  it("kills a pre hook's whole process group on timeout and blocks", async () => {
    const pidFile = join(root, "sleeper.pid");
    const path = await script("slow.sh", `sleep 10 &\necho $! > "${pidFile}"\nwait`);
    const outcome = await runHook(hooks("pre_tool_execution", [path], 300), { name: "pre_tool_execution", payload: {} }, context());
    expect(outcome).toEqual({ kind: "block", reason: "pre_tool_execution hook failed: timed out after 300 ms" });
    expect(records[0]?.record.timed_out).toBe(true);
    const sleeper = Number(await readFile(pidFile, "utf8"));
    expect(await diesSoon(sleeper)).toBe(true);
  });

  it("kills a running hook's process group at once when the run's signal aborts, and does not start one after", async () => {
    const pidFile = join(root, "sleeper.pid");
    const path = await script("slow.sh", `sleep 10 &\necho $! > "${pidFile}"\nwait`);
    const interrupt = new AbortController();
    const running = runHook(hooks("pre_llm_request", [path], 60_000), { name: "pre_llm_request", payload: {} }, context({ signal: interrupt.signal }));
    await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "", 5_000, "the hook's pid");
    interrupt.abort();
    expect(await running).toEqual({ kind: "block", reason: "pre_llm_request hook failed: stopped because the run was interrupted" });
    expect(await diesSoon(Number(await readFile(pidFile, "utf8")))).toBe(true);

    const after = await runHook(hooks("on_iteration_end", [path]), { name: "on_iteration_end", payload: {} }, context({ signal: interrupt.signal }));
    expect(after).toEqual({ kind: "continue", warning: "on_iteration_end hook failed: not started: the run is being interrupted" });
  });

  it("blocks a pre hook whose command does not exist", async () => {
    const missing = join(agentHome, "hooks", "missing.sh");
    const outcome = await runHook(hooks("pre_llm_request", [missing]), { name: "pre_llm_request", payload: {} }, context());
    expect(outcome).toEqual({ kind: "block", reason: `pre_llm_request hook failed: command not found: ${missing}` });
    expect(records[0]?.record).toMatchObject({ exit_code: null, timed_out: false });
  });

  it("only warns when a post or on_ hook's command does not exist", async () => {
    const outcome = await runHook(hooks("on_error", ["no-such-hook-command-xyz"]), { name: "on_error", payload: {} }, context());
    expect(outcome).toEqual({ kind: "continue", warning: "on_error hook failed: command not found: no-such-hook-command-xyz" });
  });

  it("passes block decisions from post hooks through for the engine to judge", async () => {
    const path = await script("deny.sh", `echo '{"decision": "block", "reason": "late"}'`);
    const outcome = await runHook(hooks("post_llm_response", [path]), { name: "post_llm_response", payload: {} }, context());
    expect(outcome).toEqual({ kind: "block", reason: "late" });
  });

  it("gives the hook the run's variables in its environment, the workspace as cwd and one JSON object on stdin", async () => {
    const out = join(root, "seen");
    const path = await script(
      "spy.sh",
      `cat > "${out}.stdin"\n` +
        `printf '%s\\n' "$RUN_DIR" "$JOURNAL_PATH" "$ITERATION_COUNT" "$DELTA_RUN_ID" "$DELTA_AGENT_HOME" "$DELTA_CWD" "$TOOL_NAME" "$TOOL_RESULT" "$ERROR_MESSAGE" "$(pwd)" > "${out}.env"`,
    );
    const ctx = context();
    const payload = { id: "call_1", name: "list_files", arguments: "{}" };
    await runHook(hooks("post_tool_execution", [path]), { name: "post_tool_execution", payload, env: { TOOL_NAME: "list_files", TOOL_RESULT: "a.txt\nb.txt", ERROR_MESSAGE: "none" } }, ctx);

    expect(JSON.parse(await readFile(`${out}.stdin`, "utf8"))).toEqual({ hook: "post_tool_execution", run_id: "run-1", iteration: 3, payload });
    expect((await readFile(`${out}.env`, "utf8")).split("\n")).toEqual([
      ctx.runDir, ctx.journalPath, "3", "run-1", agentHome, workspace, "list_files", "a.txt", "b.txt", "none", workspace, "",
    ]);
  });

  it("does not let hook-specific variables leak in from the engine's own environment", async () => {
    const out = join(root, "leak");
    const path = await script("spy.sh", `printf '%s' "\${TOOL_NAME-unset}" > "${out}"`);
    process.env.TOOL_NAME = "inherited";
    try {
      await runHook(hooks("on_iteration_end", [path]), { name: "on_iteration_end", payload: {} }, context());
    } finally {
      delete process.env.TOOL_NAME;
    }
    expect(await readFile(out, "utf8")).toBe("unset");
  });

  it("expands ${AGENT_HOME} and ${CWD} in every argument of the command", async () => {
    const out = join(root, "args");
    const path = await script("args.sh", `printf '%s\\n' "$@" > "${out}"`);
    const command = ["${AGENT_HOME}/hooks/args.sh", "--home=${AGENT_HOME}", "${CWD}/x", "$HOME", "${OTHER}"];
    await runHook(hooks("on_iteration_start", command), { name: "on_iteration_start", payload: {} }, context());
    expect(await readFile(out, "utf8")).toBe(`--home=${agentHome}\n${workspace}/x\n$HOME\n\${OTHER}\n`);
    expect(records[0]?.record.command).toEqual([path, `--home=${agentHome}`, `${workspace}/x`, "$HOME", "${OTHER}"]);
  });

  it("records every execution completely, with the expanded command and the stdin sent", async () => {
    const path = await script("rec.sh", `cat > /dev/null\necho out\necho err >&2\nexit 2`);
    const lines: string[] = [];
    await runHook(hooks("pre_tool_execution", ["${AGENT_HOME}/hooks/rec.sh"]), { name: "pre_tool_execution", payload: { x: 1 } }, context({ log: (line) => lines.push(line) }));

    expect(records).toHaveLength(1);
    const { name, record } = records[0]!;
    expect(name).toBe("pre_tool_execution");
    expect(HookRecordSchema.parse(record)).toEqual(record);
    expect(record).toMatchObject({
      hook: "pre_tool_execution",
      command: [path],
      cwd: workspace,
      stdout: "out\n",
      stderr: "err\n",
      exit_code: 2,
      signal: null,
      timed_out: false,
      outcome: { kind: "block", reason: "err" },
    });
    expect(JSON.parse(record.stdin)).toEqual({ hook: "pre_tool_execution", run_id: "run-1", iteration: 3, payload: { x: 1 } });
    expect(record.duration_ms).toBeGreaterThanOrEqual(0);
    expect(lines).toEqual([expect.stringContaining("pre_tool_execution blocked")]);
  });

  it("still succeeds when the hook ignores a large stdin payload", async () => {
    const path = await script("deaf.sh", "exit 0");
    const payload = { blob: "x".repeat(2_000_000) };
    const outcome = await runHook(hooks("on_iteration_end", [path]), { name: "on_iteration_end", payload }, context());
    expect(outcome).toEqual({ kind: "continue" });
  });
});

describe("runHook with a command that cannot be spawned", () => {
  it("fails closed for a pre hook whose argv holds a NUL byte instead of throwing", async () => {
    const outcome = await runHook(hooks("pre_tool_execution", ["echo", "a\0b"]), { name: "pre_tool_execution", payload: {} }, context());
    expect(outcome.kind).toBe("block");
    expect(outcome.kind === "block" && outcome.reason).toMatch(/^pre_tool_execution hook failed: could not start echo: .*null bytes/);
    expect(records).toHaveLength(1);
  });

  it("says the working directory is missing rather than blaming the command", async () => {
    const outcome = await runHook(hooks("on_iteration_start", ["true"]), { name: "on_iteration_start", payload: {} }, context({ cwd: join(root, "gone") }));
    expect(outcome).toEqual({ kind: "continue", warning: `on_iteration_start hook failed: working directory not found: ${join(root, "gone")}` });
  });
});
