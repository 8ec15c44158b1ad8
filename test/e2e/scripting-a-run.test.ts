// End to end: scripting runs — the question of ask_human on stderr, empty tasks refused, --stdin, runs found where they were made, --resumable, refusals as REFUSED, missing programs, CLI edges.
import { execa } from "execa";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reply, taskOf, type MockLlm } from "../support/mock-llm.js";
import { DELTA_BIN, NO_MODEL_KEYS, delta, modelEnv, readEvents, runDir, spawnDelta, waitFor, writeAgent, journalHas, setUpE2e } from "./harness.js";

const { root, serve } = setUpE2e();
let server: MockLlm;


const userMessages = (ws: string, runId: string): string[] => readEvents(ws, runId).flatMap((event) => (event.type === "USER_MESSAGE" ? [event.content] : []));

describe("a question of ask_human", () => {
  it("is said on stderr with a pasteable answer command in json and raw formats", async () => {
    server = await serve([reply.toolCalls([{ name: "ask_human", arguments: { prompt: "Your name?" } }]), reply.toolCalls([{ name: "ask_human", arguments: { prompt: "Your name?" } }])]);
    const agent = writeAgent(root, {}, "agent-ask");
    const ws = join(root, "ws-ask");
    for (const format of ["json", "raw"]) {
      const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", `ask-${format}`, "-m", "greet me", "--format", format], { env: modelEnv(server.baseUrl) });
      expect(result.exitCode, result.stderr).toBe(101);
      expect(result.stderr).toContain("The agent asks: Your name?\n");
      expect(result.stderr).toContain(`Answer with: delta continue --run-id ask-${format} -w ${ws} -m '<answer>'`);
    }
  });
});

describe("an empty task", () => {
  it("is refused (126) from -m \"\" or -m \"   \" before anything is created or sent, and continue -m \"\" appends nothing", async () => {
    server = await serve([reply.text("done")]);
    const agent = writeAgent(root, {}, "agent-empty");
    for (const task of ["", "   "]) {
      const ws = join(root, `ws-empty-${task.length}`);
      const result = await delta(["run", "--agent", agent, "-w", ws, "-m", task, "--format", "json"], { env: modelEnv(server.baseUrl) });
      expect(result.exitCode).toBe(126);
      expect(JSON.parse(result.stdout)).toMatchObject({ status: "REFUSED", run_id: null, error: { type: "USAGE_ERROR", message: expect.stringContaining("-m/--message is empty") } });
      expect(existsSync(ws)).toBe(false);
    }
    expect(server.requests).toHaveLength(0);

    const ws = join(root, "ws-empty-continue");
    expect((await delta(["run", "--agent", agent, "-w", ws, "--run-id", "e1", "-m", "first"], { env: modelEnv(server.baseUrl) })).exitCode).toBe(0);
    const before = readFileSync(join(runDir(ws, "e1"), "journal.jsonl"), "utf8");
    const empty = await delta(["continue", "--run-id", "e1", "-w", ws, "-m", ""], { env: modelEnv(server.baseUrl) });
    expect(empty.exitCode).toBe(126);
    expect(readFileSync(join(runDir(ws, "e1"), "journal.jsonl"), "utf8")).toBe(before);
  });
});

describe("--stdin", () => {
  it("appends the piped data after the message, for run and continue", async () => {
    server = await serve([reply.text("summary"), reply.text("more")]);
    const agent = writeAgent(root, {}, "agent-stdin");
    const ws = join(root, "ws-stdin");
    const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "s1", "-m", "summarise this", "--stdin"], { env: modelEnv(server.baseUrl), input: "DATA line 1\nDATA line 2\n" });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(taskOf(server.requests[0]!)).toBe("summarise this\n\nDATA line 1\nDATA line 2");
    const more = await delta(["continue", "--run-id", "s1", "-w", ws, "-m", "and this", "--stdin"], { env: modelEnv(server.baseUrl), input: "MORE\n" });
    expect(more.exitCode, more.stderr).toBe(0);
    expect(userMessages(ws, "s1")).toEqual(["summarise this\n\nDATA line 1\nDATA line 2", "and this\n\nMORE"]);
  });

  it("refuses more than 1 MiB on stdin (126) before the run starts", async () => {
    server = await serve([]);
    const agent = writeAgent(root, {}, "agent-stdin-big");
    const ws = join(root, "ws-stdin-big");
    const result = await delta(["run", "--agent", agent, "-w", ws, "-m", "x", "--stdin"], { env: modelEnv(server.baseUrl), input: "x".repeat(1024 * 1024 + 1) });
    expect(result.exitCode).toBe(126);
    expect(result.stderr).toContain("stdin holds more than 1 MiB");
    expect(existsSync(ws)).toBe(false);
  });

  it("is never read unasked: a `while read` loop over 3 ids runs all 3", async () => {
    server = await serve([reply.text("1"), reply.text("2"), reply.text("3")]);
    const agent = writeAgent(root, {}, "agent-loop");
    const ws = join(root, "ws-loop");
    const script = `printf 'a\\nb\\nc\\n' | while read id; do "$NODE" "$DELTA" run --agent "$AGENT" -w "$WS" --run-id "loop-$id" -m "task $id" --format raw; done`;
    const loop = await execa("bash", ["-c", script], { env: { ...NO_MODEL_KEYS, ...modelEnv(server.baseUrl), NODE: process.execPath, DELTA: DELTA_BIN, AGENT: agent, WS: ws }, reject: false, timeout: 60_000 });
    expect(loop.exitCode, String(loop.stderr)).toBe(0);
    expect(["a", "b", "c"].map((id) => userMessages(ws, `loop-${id}`))).toEqual([["task a"], ["task b"], ["task c"]]);
  }, 60_000);
});

describe("finding runs where they were made", () => {
  it("show --last, list-runs and continue --last in the agent's folder find the run `run -y` made there", async () => {
    server = await serve([reply.text("made"), reply.text("continued")]);
    const agent = writeAgent(root, {}, "agent-here");
    const env = modelEnv(server.baseUrl);
    expect((await delta(["run", "-y", "--run-id", "here-1", "-m", "make it"], { cwd: agent, env })).exitCode).toBe(0);
    const shown = await delta(["show", "--last"], { cwd: agent });
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("Run here-1");
    expect((await delta(["list-runs", "--format", "raw"], { cwd: agent })).stdout).toBe("here-1\n");
    const continued = await delta(["continue", "--last", "-m", "more", "--format", "json"], { cwd: agent, env });
    expect(continued.exitCode, continued.stderr).toBe(0);
    expect(JSON.parse(continued.stdout)).toMatchObject({ run_id: "here-1", result: "continued" });
  });
});

describe("list-runs --resumable", () => {
  it("lists unfinished runs only: FAILED yes, COMPLETED no", async () => {
    server = await serve([reply.text("done"), reply.toolCalls([{ name: "echo", arguments: { text: "x" } }])]);
    const agent = writeAgent(root, {}, "agent-resumable");
    const ws = join(root, "ws-resumable");
    await delta(["run", "--agent", agent, "-w", ws, "--run-id", "finished", "-m", "a"], { env: modelEnv(server.baseUrl) });
    await delta(["run", "--agent", agent, "-w", ws, "--run-id", "unfinished", "-m", "b", "--max-iterations", "1"], { env: modelEnv(server.baseUrl) });
    const listed = await delta(["list-runs", "-w", ws, "--resumable", "--format", "raw"]);
    expect(listed.stdout).toBe("unfinished\n");
  });
});

describe("a refusal", () => {
  it("is REFUSED in the RunResult, with run_id null when no run was made, the agent's name once it loaded, and one line in stream-json", async () => {
    const missing = await delta(["run", "--agent", join(root, "no-such-agent"), "--run-id", "mine", "-m", "x", "--format", "json"]);
    expect(missing.exitCode).toBe(126);
    expect(JSON.parse(missing.stdout)).toMatchObject({ schema_version: "2.0", status: "REFUSED", run_id: null, error: { type: "CONFIG_ERROR" }, metadata: { agent_name: null } });

    const agent = writeAgent(root, {}, "agent-refused");
    const noKey = await delta(["run", "--agent", agent, "-w", join(root, "ws-refused"), "-m", "x", "--format", "stream-json"]);
    expect(noKey.exitCode).toBe(126);
    const lines = noKey.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ status: "REFUSED", run_id: null, error: { type: "MISSING_API_KEY" }, metadata: { agent_name: "test-agent" } });

    const unknown = await delta(["continue", "--run-id", "nope", "-w", root, "--format", "json"]);
    expect(unknown.exitCode).toBe(126);
    expect(JSON.parse(unknown.stdout)).toMatchObject({ status: "REFUSED", run_id: "nope", error: { type: "RUN_REFUSED" } });
  });
});

describe("a tool whose program is missing", () => {
  const tools = 'tools:\n  - name: listing\n    exec: "lsx-not-installed -la ${directory}"\n';
  it("is refused (126) by run, tool list and tool expand, naming the tool and the fix", async () => {
    server = await serve([reply.text("never")]);
    const agent = writeAgent(root, { tools }, "agent-missing-program");
    const ws = join(root, "ws-missing-program");
    const run = await delta(["run", "--agent", agent, "-w", ws, "-m", "list", "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(run.exitCode).toBe(126);
    expect(JSON.parse(run.stdout).error.message).toContain(`${join(agent, "agent.yaml")}: tools[0] (tool 'listing'): exec: the program "lsx-not-installed" is not a command found on PATH`);
    expect(JSON.parse(run.stdout).error.message).toContain("check_program: false");
    expect(server.requests).toHaveLength(0);
    expect(existsSync(ws)).toBe(false);
    for (const action of ["list", "expand"]) {
      const shown = await delta(["tool", action, agent]);
      expect(shown.exitCode).toBe(126);
      expect(shown.stderr).toContain("tool 'listing'");
    }
  });

  it("is left to the run with check_program: false (the run creates it), and a shell: script is never checked", async () => {
    server = await serve([reply.text("ok")]);
    const agent = writeAgent(root, { tools: `${tools}    check_program: false\n  - name: scripted\n    shell: "lsx-not-installed"\n` }, "agent-unchecked-program");
    const result = await delta(["run", "--agent", agent, "-w", join(root, "ws-unchecked"), "-m", "x"], { env: modelEnv(server.baseUrl) });
    expect(result.exitCode, result.stderr).toBe(0);
  });
});

describe("command-line edges", () => {
  it("delta help is delta --help, -V is --version, and an unknown command with --help is refused", async () => {
    const help = await delta(["help"]);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toBe((await delta(["--help"])).stdout);
    const version = await delta(["-V"]);
    expect(version.exitCode).toBe(0);
    expect(version.stdout).toMatch(/^delta\/\d+\.\d+\.\d+/);
    const unknown = await delta(["no-such-command", "--help"]);
    expect(unknown.exitCode).toBe(126);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toContain("Unknown command 'no-such-command'");
  });

  it("names an unknown option as it was typed", async () => {
    for (const typed of ["--no-such-flag", "--output-format", "--answer-schema=x.json"]) {
      const result = await delta(["run", "--agent", root, "-m", "x", typed]);
      expect(result.exitCode).toBe(126);
      expect(result.stderr).toContain(`Unknown option \`${typed.split("=")[0]}\`. See: delta run --help`);
    }
  });

  it("delta schema without an argument lists the schemas; run --help names the required task and shows an example", async () => {
    const schema = await delta(["schema"]);
    expect(schema.exitCode).toBe(0);
    expect(schema.stdout).toMatch(/agent\s+agent\.yaml\n\s+context\s+context\.yaml\n\s+hooks\s+hooks\.yaml/);
    const runHelp = await delta(["run", "--help"]);
    expect(runHelp.stdout).toContain("Required: the task");
    expect(runHelp.stdout).toMatch(/Examples:\n.*delta run --agent \.\/my-agent "/);
  });

  it("list-runs text has a header and columns that line up", async () => {
    server = await serve([reply.text("a"), reply.text("b")]);
    const agent = writeAgent(root, {}, "agent-table");
    const ws = join(root, "ws-table");
    await delta(["run", "--agent", agent, "-w", ws, "--run-id", "short", "-m", "a task"], { env: modelEnv(server.baseUrl) });
    await delta(["run", "--agent", agent, "-w", ws, "--run-id", "a-much-longer-run-id", "-m", "another task"], { env: modelEnv(server.baseUrl) });
    const lines = (await delta(["list-runs", "-w", ws])).stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^RUN ID\s+STATUS\s+ITER\s+UPDATED\s+TASK$/);
    expect(lines).toHaveLength(3);
    const statusColumn = lines[0]!.indexOf("STATUS");
    for (const line of lines.slice(1)) expect(line.indexOf("COMPLETED")).toBe(statusColumn);
  });

  it("show counts the lines of the tool's whole output, and --full prints thoughts uncut", async () => {
    const thought = `Let me count. ${"word ".repeat(60)}END-OF-THOUGHT`;
    server = await serve([reply.toolCalls([{ name: "count", arguments: {} }], thought), reply.text("counted")]);
    const agent = writeAgent(root, { tools: 'tools:\n  - name: count\n    exec: "seq 1 100000"\n' }, "agent-count");
    const ws = join(root, "ws-count");
    expect((await delta(["run", "--agent", agent, "-w", ws, "--run-id", "c1", "-m", "count"], { env: modelEnv(server.baseUrl) })).exitCode).toBe(0);
    const shown = await delta(["show", "c1", "-w", ws]);
    expect(shown.stdout).toContain("… 99996 more lines");
    expect(shown.stdout).not.toContain("END-OF-THOUGHT");
    const full = await delta(["show", "c1", "-w", ws, "--full"]);
    expect(full.stdout).toContain("END-OF-THOUGHT");
  });

  it("SIGINT prints the command that resumes the run once", async () => {
    server = await serve([reply.toolCalls([{ name: "wait", arguments: {} }])]);
    const agent = writeAgent(root, { tools: 'tools:\n  - name: wait\n    exec: "sleep 30"\n' }, "agent-sigint");
    const ws = join(root, "ws-sigint");
    const child = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "int-1", "-m", "wait"], { env: modelEnv(server.baseUrl) });
    await waitFor(() => journalHas(ws, "int-1", "ACTION_REQUEST"), 15_000, "the tool to start");
    child.kill("SIGINT");
    const result = await child;
    expect(result.exitCode).toBe(130);
    const both = `${String(result.stdout)}${String(result.stderr)}`;
    expect(both.split(`delta continue --run-id int-1 -w ${ws}`).length - 1).toBe(1);
  });

  it("show --follow on a workspace that does not exist is refused at once", async () => {
    const result = await delta(["show", "some-run", "-w", join(root, "no-such-workspace"), "--follow"], { timeoutMs: 10_000 });
    expect(result.exitCode).toBe(126);
    expect(result.stderr).toContain("no such directory");
  });
});
