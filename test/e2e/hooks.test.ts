// End to end: lifecycle hooks (hooks.yaml) run by the real `delta` binary against the scripted model.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { HookName } from "../../src/hooks/schema.js";
import { type MockLlm, reply, startMockLlm, type Step } from "../support/mock-llm.js";
import { diesSoon } from "../support/processes.js";
import { type AgentSpec, collectFiles, delta, type DeltaResult, listIo, modelEnv, runDir, spawnDelta, waitFor, writeAgent, setUpE2e } from "./harness.js";

const API_KEY = modelEnv("").DELTA_API_KEY!;

const { root } = setUpE2e("delta-hooks-e2e-");

/** Appends the hook's name to hooks.log and keeps its stdin and environment beside it, numbered by position. */
const RECORD_SCRIPT = `#!/bin/sh
name="$1"
echo "$name" >> hooks.log
n=$(wc -l < hooks.log | tr -d ' ')
cat > "hook-$n.stdin.json"
env > "hook-$n.env"
echo "seen $name" >&2
`;

/** Appends the stdin JSON of each run end to run_end.jsonl, one line each. */
const RUN_END_LOG = { command: ["sh", "-c", "cat >> run_end.jsonl; echo >> run_end.jsonl"] };

/** A hook command that runs an inline sh script; `args` become $1, $2… */
function sh(script: string, ...args: string[]): string[] {
  return ["sh", "-c", script, "sh", ...args];
}

/** hooks.yaml from an object: YAML accepts JSON, which spares the tests any quoting. */
function hooksYaml(hooks: Partial<Record<HookName, { command: string[]; timeout_ms?: number }>>): string {
  return JSON.stringify(hooks, null, 2);
}

const TOOLS = `tools:
  - name: echo
    exec: "echo \${text}"
  - name: fail
    shell: "echo broken >&2; exit 3"
  - name: touch_marker
    exec: "touch ran.txt"
`;

interface Case {
  server: MockLlm;
  agent: string;
  ws: string;
  runId: string;
  result: DeltaResult;
}

/** Writes an agent, starts a scripted model for it, runs `delta run` once and stops the model. */
async function runCase(name: string, spec: AgentSpec, script: Step[], extraArgs: string[] = [], env: Record<string, string> = {}): Promise<Case> {
  const server = await startMockLlm(script);
  try {
    const agent = writeAgent(root, { tools: TOOLS, ...spec }, `agent-${name}`);
    const ws = join(root, `ws-${name}`);
    const runId = `hooks-${name}`;
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", runId, "-m", "go", ...extraArgs], { env: modelEnv(server.baseUrl, env) });
    return { server, agent, ws, runId, result };
  } finally {
    await server.close();
  }
}

function read(ws: string, file: string): string {
  return readFileSync(join(ws, file), "utf8");
}

function lines(text: string): string[] {
  return text.split("\n").filter((line) => line !== "");
}

function envOf(ws: string, n: number): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of lines(read(ws, `hook-${n}.env`))) {
    const eq = line.indexOf("=");
    if (eq > 0) env[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return env;
}

function runEnds(ws: string): Array<{ hook: string; payload: { status: string; error: { type: string; message: string } | null } }> {
  return lines(read(ws, "run_end.jsonl")).map((line) => JSON.parse(line));
}


function hookRecords(ws: string, runId: string): Array<Record<string, unknown>> {
  return listIo(ws, runId, "hooks").map((file) => JSON.parse(readFileSync(join(runDir(ws, runId), "io", "hooks", file), "utf8")));
}


const ALL_HOOKS: HookName[] = ["pre_llm_request", "post_llm_response", "pre_tool_execution", "post_tool_execution", "on_error", "on_run_end", "on_iteration_start", "on_iteration_end"];

describe.concurrent("lifecycle hooks, end to end", () => {
  it("fires all eight hook points in loop order, with the contract's stdin and environment, and records each execution", async () => {
    const hooks = Object.fromEntries(ALL_HOOKS.map((hook) => [hook, { command: ["sh", "${AGENT_HOME}/hooks/record.sh", hook] }]));
    const c = await runCase(
      "order",
      { hooksYaml: hooksYaml(hooks), files: { "hooks/record.sh": RECORD_SCRIPT } },
      [reply.toolCalls([{ name: "echo", arguments: { text: "hello" } }, { name: "fail", arguments: {} }]), reply.text("finished")],
      [],
      { TOOL_NAME: "leaked-from-parent", ERROR_MESSAGE: "leaked-from-parent" },
    );
    expect(c.result.exitCode, c.result.stderr).toBe(0);

    const sequence = lines(read(c.ws, "hooks.log"));
    expect(sequence).toEqual([
      "on_iteration_start",
      "pre_llm_request",
      "post_llm_response",
      "pre_tool_execution",
      "post_tool_execution",
      "pre_tool_execution",
      "post_tool_execution",
      "on_error",
      "on_iteration_end",
      "on_iteration_start",
      "pre_llm_request",
      "post_llm_response",
      "on_iteration_end",
      "on_run_end",
    ]);

    // stdin: {hook, run_id, iteration, payload}, the payload being what the hook point is about.
    const stdin = sequence.map((_, i) => JSON.parse(read(c.ws, `hook-${i + 1}.stdin.json`)));
    sequence.forEach((hook, i) => expect(stdin[i]).toMatchObject({ hook, run_id: c.runId, iteration: i < 9 ? 1 : 2 }));
    expect(stdin[0].payload).toEqual({ iteration: 1 });
    expect(stdin[1].payload).toMatchObject({ model: "mock-model", messages: [{ role: "system" }, { role: "user", content: "go" }] });
    expect(stdin[1].payload.tools.map((tool: { function: { name: string } }) => tool.function.name)).toContain("echo");
    expect(stdin[2].payload.tool_calls.map((call: { name: string }) => call.name)).toEqual(["echo", "fail"]);
    expect(stdin[3].payload).toMatchObject({ name: "echo", arguments: JSON.stringify({ text: "hello" }) });
    expect(stdin[4].payload).toMatchObject({ type: "ACTION_RESULT", tool_name: "echo", status: "SUCCESS" });
    expect(stdin[7].payload).toMatchObject({ type: "ACTION_RESULT", tool_name: "fail", status: "FAILED" });
    expect(stdin[11].payload).toMatchObject({ content: "finished", tool_calls: [] });
    expect(stdin[13].payload).toEqual({ status: "COMPLETED", error: null });

    // Environment: the spec's variables plus DELTA_RUN_ID; hook-specific ones only where they belong.
    const common = { RUN_DIR: runDir(c.ws, c.runId), JOURNAL_PATH: join(runDir(c.ws, c.runId), "journal.jsonl"), DELTA_RUN_ID: c.runId, DELTA_AGENT_HOME: c.agent, DELTA_CWD: c.ws };
    expect(envOf(c.ws, 1)).toMatchObject({ ...common, ITERATION_COUNT: "1" });
    expect(envOf(c.ws, 11)).toMatchObject({ ...common, ITERATION_COUNT: "2" });
    for (const n of [1, 2, 3, 9, 14]) {
      expect(envOf(c.ws, n).TOOL_NAME).toBeUndefined();
      expect(envOf(c.ws, n).ERROR_MESSAGE).toBeUndefined();
    }
    expect(envOf(c.ws, 4)).toMatchObject({ TOOL_NAME: "echo" });
    expect(envOf(c.ws, 4).TOOL_RESULT).toBeUndefined();
    expect(envOf(c.ws, 5)).toMatchObject({ TOOL_NAME: "echo", TOOL_RESULT: expect.stringContaining("hello") });
    expect(envOf(c.ws, 8)).toMatchObject({ TOOL_NAME: "fail", ERROR_MESSAGE: expect.stringContaining("broken") });

    // io/hooks/: one record per execution, with what ran, what it read and what it said.
    const records = hookRecords(c.ws, c.runId).sort((a, b) => String(a.started_at).localeCompare(String(b.started_at)));
    expect(records.map((record) => record.hook)).toEqual(sequence);
    records.forEach((record, i) => {
      expect(record).toMatchObject({
        command: ["sh", join(c.agent, "hooks/record.sh"), sequence[i]],
        cwd: c.ws,
        stdin: read(c.ws, `hook-${i + 1}.stdin.json`),
        stdout: "",
        stderr: `seen ${sequence[i]}\n`,
        exit_code: 0,
        duration_ms: expect.any(Number),
      });
    });
  });

  it("still loads the legacy lifecycle_hooks of agent.yaml, with a deprecation warning", async () => {
    const agentYaml = `name: legacy\nllm:\n  model: mock-model\n${TOOLS}lifecycle_hooks:\n  on_run_end:\n    command: ["sh", "-c", "echo legacy-$DELTA_RUN_ID >> legacy.log"]\n`;
    const c = await runCase("legacy", { agentYaml }, [reply.text("done")]);
    expect(c.result.exitCode, c.result.stderr).toBe(0);
    expect(read(c.ws, "legacy.log")).toBe(`legacy-${c.runId}\n`);
    expect(c.result.stderr).toContain("[DEPRECATION WARNING]");
    expect(c.result.stderr).toContain("lifecycle_hooks is deprecated");
  });

  it("fails the run with exit 1 when pre_llm_request blocks, and fires on_error and on_run_end once", async () => {
    const c = await runCase(
      "llm-blocked",
      {
        hooksYaml: hooksYaml({
          pre_llm_request: { command: sh('echo "token budget exhausted" >&2; exit 2') },
          on_error: { command: sh('echo "$ERROR_MESSAGE" >> errors.log') },
          on_run_end: RUN_END_LOG,
        }),
      },
      [reply.text("never sent")],
      ["--format", "json"],
    );
    expect(c.result.exitCode).toBe(1);
    expect(c.server.requests).toHaveLength(0);
    const message = "pre_llm_request hook blocked the model request: token budget exhausted";
    expect(JSON.parse(c.result.stdout)).toMatchObject({ status: "FAILED", error: { type: "HOOK_BLOCKED", message } });
    expect(read(c.ws, "errors.log")).toBe(`${message}\n`);
    expect(runEnds(c.ws).map((end) => end.payload)).toEqual([{ status: "FAILED", error: { type: "HOOK_BLOCKED", message } }]);
  });

  it("fails open: crashing post_* and on_* hooks are warnings, the run completes, and no secret reaches the logs", async () => {
    const c = await runCase(
      "fail-open",
      {
        // The post_tool_execution hook prints the key, so it must have it.
        tools: `${TOOLS}env_passthrough: [DELTA_API_KEY]\n`,
        hooksYaml: hooksYaml({
          on_iteration_start: { command: sh('echo "start broke" >&2; exit 6') },
          post_llm_response: { command: sh("kill -9 $$") },
          post_tool_execution: { command: sh('echo "post broke with key $DELTA_API_KEY" >&2; exit 3') },
          on_error: { command: sh('echo "on_error broke" >&2; exit 4') },
          on_iteration_end: { command: sh("echo '{\"decision\":\"block\",\"reason\":\"stop now\"}'") },
          on_run_end: { command: sh('echo "run_end broke" >&2; exit 5') },
        }),
      },
      [reply.toolCalls([{ name: "fail", arguments: {} }]), reply.text("done anyway")],
      ["-v", "--format", "raw"],
    );
    expect(c.result.exitCode, c.result.stderr).toBe(0);
    expect(c.result.stdout).toBe("done anyway\n");
    const warnings = lines(c.result.stderr).filter((line) => line.startsWith("[warning]"));
    // Each failure is reported once, in the order the hooks ran, whichever hook point it was.
    expect(warnings).toEqual([
      "[warning] on_iteration_start hook failed: exit 6: start broke",
      "[warning] post_llm_response hook failed: killed by SIGKILL",
      "[warning] post_tool_execution hook failed: exit 3: post broke with key [REDACTED]",
      "[warning] on_error hook failed: exit 4: on_error broke",
      "[warning] on_iteration_end hook asked to block, which it cannot do; ignored: stop now",
      "[warning] on_iteration_start hook failed: exit 6: start broke",
      "[warning] post_llm_response hook failed: killed by SIGKILL",
      "[warning] on_iteration_end hook asked to block, which it cannot do; ignored: stop now",
      "[warning] on_run_end hook failed: exit 5: run_end broke",
    ]);
    expect(c.result.stderr).not.toContain(API_KEY);
    const files = collectFiles(runDir(c.ws, c.runId));
    expect(files.some((file) => file.endsWith("engine.log"))).toBe(true);
    for (const file of files) expect(readFileSync(file, "utf8"), file).not.toContain(API_KEY);
    expect(read(join(runDir(c.ws, c.runId)), "engine.log")).toContain("post broke with key [REDACTED]");
  });

  it("fires on_run_end once per process: waiting for input (101), then completed after continue", async () => {
    const server = await startMockLlm([reply.toolCalls([{ name: "ask_human", arguments: { prompt: "Which color?" } }]), reply.text("blue it is")]);
    try {
      const agent = writeAgent(root, { tools: TOOLS, hooksYaml: hooksYaml({ on_run_end: RUN_END_LOG }) }, "agent-waiting");
      const ws = join(root, "ws-waiting");
      const env = modelEnv(server.baseUrl);
      const first = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "hooks-waiting", "-m", "go"], { env });
      expect(first.exitCode, first.stderr).toBe(101);
      expect(runEnds(ws).map((end) => end.payload.status)).toEqual(["WAITING_FOR_INPUT"]);
      const second = await delta(["continue", "--run-id", "hooks-waiting", "-w", ws, "-m", "blue"], { env });
      expect(second.exitCode, second.stderr).toBe(0);
      expect(runEnds(ws).map((end) => end.payload.status)).toEqual(["WAITING_FOR_INPUT", "COMPLETED"]);
    } finally {
      await server.close();
    }
  });

  it("SIGINT during a running hook kills the hook's process group, exits 130 and fires on_run_end once", async () => {
    const server = await startMockLlm([reply.text("never sent")]);
    try {
      const agent = writeAgent(root, {
        tools: TOOLS,
        hooksYaml: hooksYaml({ pre_llm_request: { command: sh("sleep 60 & echo $! > child.pid; wait"), timeout_ms: 120_000 }, on_run_end: RUN_END_LOG }),
      }, "agent-sigint");
      const ws = join(root, "ws-sigint");
      const child = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "hooks-sigint", "-m", "go"], { env: modelEnv(server.baseUrl) });
      const pidFile = join(ws, "child.pid");
      await waitFor(() => child.exitCode !== null || (existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== ""), 15_000, "the hook's child pid");
      if (child.exitCode !== null) throw new Error(`delta exited (${child.exitCode}) before the hook started: ${String((await child).stderr)}`);
      const hookChild = Number(readFileSync(pidFile, "utf8"));
      child.kill("SIGINT");
      const result = await child;
      expect(result.exitCode, String(result.stderr)).toBe(130);
      expect(await diesSoon(hookChild)).toBe(true);
      expect(server.requests).toHaveLength(0);
      expect(runEnds(ws).map((end) => end.payload.status)).toEqual(["INTERRUPTED"]);
    } finally {
      await server.close();
    }
  });
});
