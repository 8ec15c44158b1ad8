// `delta show`: a run as text for a person (task, iterations, tool calls, tokens, status, next command), and --follow on a run another process writes.
import { execa } from "execa";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fault, reply, startMockLlm, type MockLlm } from "../support/mock-llm.js";
import { DELTA_BIN, delta, modelEnv, readMetadataFile, spawnDelta, waitFor, writeAgent, setUpE2e } from "./harness.js";

const TOOLS = `tools:
  - name: echo
    exec: "echo \${text}"
  - name: lines
    shell: "seq 1 \${count}"
  - name: wait_gate
    description: Waits until the test creates the file gate in the workspace.
    shell: "while [ ! -f gate ]; do sleep 0.02; done; echo opened"
  - name: hostile
    shell: "printf 'red \\\\033[31mALERT\\\\033[0m\\\\n'"
`;

const { root } = setUpE2e("delta-show-");
let agent: string;
beforeAll(() => {
  agent = writeAgent(root, { tools: TOOLS });
});

async function runWith(steps: Parameters<typeof startMockLlm>[0], args: string[]): Promise<{ exitCode: number; stderr: string }> {
  const server = await startMockLlm(steps);
  try {
    return await delta(["run", "--agent", agent, ...args], { env: modelEnv(server.baseUrl) });
  } finally {
    await server.close();
  }
}

describe.concurrent("delta show", () => {
  it("tells a completed run: task, thoughts, tool calls with arguments, exit codes, durations, observation heads, tokens per iteration and in total, and how to go on", async () => {
    const ws = join(root, "ws-completed");
    const run = await runWith(
      [
        reply.toolCalls([{ name: "echo", arguments: { text: "hello there" } }], "I will greet first.", { usage: { prompt_tokens: 120, completion_tokens: 15 } }),
        reply.toolCalls([{ name: "lines", arguments: { count: "9" } }], null, { usage: { prompt_tokens: 180, completion_tokens: 12 } }),
        reply.text("Greeted, and counted to nine.\nSecond line of the answer.", { usage: { prompt_tokens: 230, completion_tokens: 20 } }),
      ],
      ["-w", ws, "--run-id", "done-1", "-m", "Greet, then count to nine"],
    );
    expect(run.exitCode, run.stderr).toBe(0);

    const shown = await delta(["show", "done-1", "-w", ws]);
    expect(shown.exitCode, shown.stderr).toBe(0);
    const out = shown.stdout;
    expect(out).toMatch(/^Run done-1 {2}COMPLETED\n/);
    expect(out).toContain("task   Greet, then count to nine");
    expect(out).toMatch(/\[1\] +mock-model · \d+ ms · 120 in · 15 out\n.*I will greet first\./);
    expect(out).toMatch(/\[1\] +echo \{"text":"hello there"\}\n.*→ SUCCESS · exit 0 · \d+ ms\n +│ hello there\n/);
    // Nine lines of output: the head is shown, then how many more the journal holds.
    expect(out).toMatch(/lines \{"count":"9"\}\n.*→ SUCCESS · exit 0 · \d+ ms\n +│ 1\n +│ 2\n +│ 3\n +│ 4\n +│ … 5 more lines\n/);
    expect(out).toMatch(/\[3\] +mock-model · \d+ ms · 230 in · 20 out\n.*Greeted, and counted to nine\.\n +Second line of the answer\./);
    expect(out).toMatch(/total +\d+(\.\d)?(ms|s)?,? ?.*3 iterations · 530 in · 47 out · cost not recorded\n/);
    expect(out).toContain("status  COMPLETED");
    expect(out).toContain(`next    to go on: delta continue --run-id done-1 -w ${ws} -m '<next instruction>'`);
    // Not a terminal: no colour codes.
    expect(out).not.toContain("\u001b[");
  });

  it("prices each call with the run's llm.pricing, as the RunResult does, when the provider reports no cost", async () => {
    const priced = writeAgent(root, { agentYaml: "name: priced-agent\nllm:\n  model: mock-model\n  pricing:\n    input_per_million: 2\n    output_per_million: 10\n    cached_input_per_million: 0.5\ntools: []\n" }, "agent-priced");
    const ws = join(root, "ws-priced");
    const server = await startMockLlm([reply.text("done", { usage: { prompt_tokens: 1000, completion_tokens: 100, prompt_tokens_details: { cached_tokens: 400 } } })]);
    try {
      const run = await delta(["run", "--agent", priced, "-w", ws, "--run-id", "priced-1", "-m", "go", "--format", "json"], { env: modelEnv(server.baseUrl) });
      expect(run.exitCode, run.stderr).toBe(0);
      // 600 uncached at $2, 400 cached at $0.5, 100 out at $10 per million.
      const cost = (600 * 2 + 400 * 0.5 + 100 * 10) / 1_000_000;
      expect(JSON.parse(run.stdout).metrics.usage.total_cost_usd).toBeCloseTo(cost, 12);
    } finally {
      await server.close();
    }
    const shown = await delta(["show", "priced-1", "-w", ws]);
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/\[1\] +mock-model · \d+ ms · 1,000 in · 400 cached · 100 out · \$0\.0024 cost\n/);
    expect(shown.stdout).not.toContain("cost not recorded");
  });

  it("tells a failed run with its error and the command that retries it", async () => {
    const ws = join(root, "ws-failed");
    const run = await runWith([fault.status(400, { message: "model not found" })], ["-w", ws, "--run-id", "failed-1", "-m", "Try"]);
    expect(run.exitCode).toBe(1);
    const shown = await delta(["show", "failed-1", "-w", ws]);
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/error +LLM_ERROR: .*model not found/);
    expect(shown.stdout).toContain("status  FAILED");
    expect(shown.stdout).toContain(`next    to retry: delta continue --run-id failed-1 -w ${ws}\n`);
  });

  it("shows the question of a waiting run and hides an answer marked sensitive", async () => {
    const ws = join(root, "ws-waiting");
    const asked = await runWith(
      [reply.toolCalls([{ name: "ask_human", arguments: { prompt: "Which password?", input_type: "password" } }])],
      ["-w", ws, "--run-id", "asks-1", "-m", "Log in"],
    );
    expect(asked.exitCode).toBe(101);
    const waiting = await delta(["show", "asks-1", "-w", ws]);
    expect(waiting.stdout).toContain("ask    Which password?");
    expect(waiting.stdout).toContain(`next    to answer: delta continue --run-id asks-1 -w ${ws} -m '<answer>'`);

    const server = await startMockLlm([reply.text("Logged in.")]);
    try {
      const answered = await delta(["continue", "--run-id", "asks-1", "-w", ws, "-m", "hunter2-secret"], { env: modelEnv(server.baseUrl) });
      expect(answered.exitCode, answered.stderr).toBe(0);
    } finally {
      await server.close();
    }
    const shown = await delta(["show", "asks-1", "-w", ws]);
    expect(shown.stdout).toContain("answer (hidden: the question was marked sensitive)");
    expect(shown.stdout).toContain("│ (hidden: the question was marked sensitive)");
    expect(shown.stdout).not.toContain("hunter2-secret");
  });

  it("prints a tool's terminal escape sequences as visible text, never to the terminal", async () => {
    const ws = join(root, "ws-hostile");
    const run = await runWith([reply.toolCalls([{ name: "hostile", arguments: {} }]), reply.text("done")], ["-w", ws, "--run-id", "hostile-1", "-m", "x"]);
    expect(run.exitCode, run.stderr).toBe(0);
    const shown = await delta(["show", "hostile-1", "-w", ws]);
    expect(shown.stdout).toContain("│ red \\x1b[31mALERT\\x1b[0m");
    expect(shown.stdout).not.toContain("\u001b");
  });

  it("colours only on a terminal, and not when NO_COLOR is set", async () => {
    const ws = join(root, "ws-colour");
    const run = await runWith([reply.text("fine")], ["-w", ws, "--run-id", "colour-1", "-m", "x"]);
    expect(run.exitCode, run.stderr).toBe(0);
    // script(1) gives the command a pseudo-terminal as stdout.
    const onTerminal = (env: Record<string, string>) =>
      execa("script", ["-qec", `${process.execPath} ${DELTA_BIN} show colour-1 -w ${ws}`, "/dev/null"], { env: { ...env, TERM: "xterm" }, reject: false, stdin: "ignore" });
    const coloured = await onTerminal({ NO_COLOR: "" });
    expect(coloured.exitCode, coloured.stderr).toBe(0);
    expect(coloured.stdout).toContain("\u001b[32mCOMPLETED\u001b[39m");
    const plain = await onTerminal({ NO_COLOR: "1" });
    expect(plain.stdout).toContain("COMPLETED");
    expect(plain.stdout).not.toContain("\u001b[");
  });

  it("finds the newest run with --last, and a run among the agent's workspaces with --agent", async () => {
    const home = writeAgent(root, { tools: TOOLS }, "agent-last");
    const server = await startMockLlm([reply.text("first answer"), reply.text("second answer")]);
    try {
      for (const id of ["older", "newer"]) {
        const run = await delta(["run", "--agent", home, "-y", "--run-id", id, "-m", `task ${id}`], { env: modelEnv(server.baseUrl) });
        expect(run.exitCode, run.stderr).toBe(0);
      }
    } finally {
      await server.close();
    }
    const last = await delta(["show", "--agent", home, "--last"]);
    expect(last.exitCode, last.stderr).toBe(0);
    expect(last.stdout).toMatch(/^Run newer /);
    const older = await delta(["show", "older", "--agent", home]);
    expect(older.exitCode, older.stderr).toBe(0);
    expect(older.stdout).toContain("task   task older");
    expect(older.stdout).toContain(join(home, "workspaces", "W001"));
  });

  it("refuses an unknown run (126, how to list runs) and a missing run id (126, what to give)", async () => {
    const unknown = await delta(["show", "nope", "-w", root]);
    expect(unknown.exitCode).toBe(126);
    expect(unknown.stderr).toContain(`no run nope in ${root}; list the runs there with \`delta list-runs -w ${root}\``);
    const none = await delta(["show", "-w", root]);
    expect(none.exitCode).toBe(126);
    expect(none.stderr).toContain("Give its id");
    const bad = await delta(["show", "../etc", "-w", root]);
    expect(bad.exitCode).toBe(126);
  });
});

describe("delta show --follow", () => {
  let server: MockLlm;
  beforeAll(async () => {
    server = await startMockLlm((request) => {
      const body = request.body as { messages: { role: string }[] };
      const toolResults = body.messages.filter((m) => m.role === "tool").length;
      return toolResults === 0 ? reply.toolCalls([{ name: "wait_gate", arguments: {} }], "Waiting for the gate.") : reply.text("The gate opened.");
    });
  });
  afterAll(() => server.close());

  it("follows a run another process starts and appends to, and ends with it", async () => {
    const ws = join(root, "ws-follow");
    mkdirSync(ws);
    // The follower starts first and waits for the run to appear in the workspace.
    const follower = spawnDelta(["show", "followed", "-w", ws, "--follow"], { timeoutMs: 60_000 });
    let followed = "";
    follower.stdout!.on("data", (chunk: Buffer) => (followed += chunk.toString()));
    let waitingNote = "";
    follower.stderr!.on("data", (chunk: Buffer) => (waitingNote += chunk.toString()));
    await waitFor(() => waitingNote.includes("Waiting for run followed"), 15_000, "the follower waiting for the run");

    const run = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "followed", "-m", "Wait for the gate"], { env: modelEnv(server.baseUrl), timeoutMs: 60_000 });
    // The run is held inside its tool until the gate exists; the follower must already show the call.
    await waitFor(() => followed.includes("wait_gate {}"), 15_000, "the follower printing the tool call while it runs");
    expect(followed).toContain("task   Wait for the gate");
    expect(followed).not.toContain("The gate opened.");
    writeFileSync(join(ws, "gate"), "");

    const [runResult, followResult] = await Promise.all([run, follower]);
    expect(runResult.exitCode, String(runResult.stderr)).toBe(0);
    expect(followResult.exitCode, String(followResult.stderr)).toBe(0);
    expect(followed).toMatch(/→ SUCCESS · exit 0 · \d+ ms\n +│ opened\n/);
    expect(followed).toContain("The gate opened.");
    expect(followed).toMatch(/end +COMPLETED after iteration 2\n/);
    expect(followed).toContain("status  COMPLETED");
    // Every event printed once.
    expect(followed.match(/wait_gate \{\}/g)).toHaveLength(1);
  });

  it("stops when the run's engine is killed, and says how to recover it", async () => {
    const ws = join(root, "ws-killed");
    const run = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "killed", "-m", "Wait for the gate"], { env: modelEnv(server.baseUrl), timeoutMs: 60_000 });
    await waitFor(() => {
      try {
        return readMetadataFile(ws, "killed").pid !== undefined;
      } catch {
        return false;
      }
    }, 15_000, "the run's metadata");
    const follower = spawnDelta(["show", "killed", "-w", ws, "-f"], { timeoutMs: 60_000 });
    let followed = "";
    follower.stdout!.on("data", (chunk: Buffer) => (followed += chunk.toString()));
    await waitFor(() => followed.includes("wait_gate {}"), 15_000, "the follower printing the tool call");
    run.kill("SIGKILL");
    await run;
    const result = await follower;
    // The tool process outlives the engine: let it finish.
    writeFileSync(join(ws, "gate"), "");
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(followed).toMatch(/status +RUNNING but its engine is gone/);
    expect(followed).toContain(`next    to recover: delta continue --run-id killed -w ${ws}`);

    // Recovered, the cut call's synthesized result comes after the janitor's events, so it names its tool.
    const resumed = await delta(["continue", "--run-id", "killed", "-w", ws], { env: modelEnv(server.baseUrl) });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const shown = await delta(["show", "killed", "-w", ws]);
    expect(shown.stdout).toMatch(/error +ORPHANED_RUN: /);
    expect(shown.stdout).toMatch(/→ wait_gate ERROR · no exit code · \d+ ms\n +│ The engine stopped before this action finished/);
    expect(shown.stdout).toContain("status  COMPLETED");
  });
});
