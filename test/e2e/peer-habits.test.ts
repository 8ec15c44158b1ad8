// End to end, as a user of `codex exec` or `claude -p` types it: the task as an argument, words never dropped, mistakes answered with the fix, --json, and --last from any folder.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import shellQuote from "shell-quote";
import { describe, expect, it } from "vitest";
import { messagesOf, reply, taskOf, type MockLlm } from "../support/mock-llm.js";
import { delta, modelEnv, readEvents, writeAgent, setUpE2e } from "./harness.js";

const { root, serve } = setUpE2e("delta-peer-habits-");
let server: MockLlm;

const userMessages = (ws: string, runId: string): string[] => readEvents(ws, runId).flatMap((event) => (event.type === "USER_MESSAGE" ? [event.content] : []));

describe("the task as an argument", () => {
  it("delta run --agent A \"task\" runs the task; delta continue --run-id X -w W \"message\" sends the message", async () => {
    server = await serve([reply.text("first answer"), reply.text("second answer")]);
    const agent = writeAgent(root, {}, "agent-arg");
    const ws = join(root, "ws-arg");
    const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "f1", "write hello"], { env: modelEnv(server.baseUrl) });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(taskOf(server.requests[0]!)).toBe("write hello");
    const more = await delta(["continue", "--run-id", "f1", "-w", ws, "try other.txt"], { env: modelEnv(server.baseUrl) });
    expect(more.exitCode, more.stderr).toBe(0);
    expect(userMessages(ws, "f1")).toEqual(["write hello", "try other.txt"]);
    expect(messagesOf(server.requests[1]!).at(-1)).toMatchObject({ role: "user", content: "try other.txt" });
  });

  it("-m with a model name beside the task (codex's -m) is refused (126) naming both, before anything runs or is billed", async () => {
    server = await serve([reply.text("never")]);
    const agent = writeAgent(root, {}, "agent-twice");
    const result = await delta(["run", "--agent", agent, "-y", "-m", "gpt-4o", "write hello", "--json"], { env: modelEnv(server.baseUrl) });
    expect(result.exitCode).toBe(126);
    expect(result.stderr).toContain('The task was given twice: as "write hello" and as -m "gpt-4o". Here -m is the task; the model is --model (e.g. --model gpt-4o).');
    expect(JSON.parse(result.stdout)).toMatchObject({ status: "REFUSED", error: { type: "USAGE_ERROR" } });
    expect(server.requests).toHaveLength(0);
    expect(existsSync(join(agent, "workspaces"))).toBe(false);
  });

  it("words the task did not take are refused (126) naming them, never dropped: a continue message too", async () => {
    server = await serve([reply.text("done")]);
    const agent = writeAgent(root, {}, "agent-words");
    const unquoted = await delta(["run", "--agent", agent, "-y", "write", "hello"], { env: modelEnv(server.baseUrl) });
    expect(unquoted.exitCode).toBe(126);
    expect(unquoted.stderr).toContain('these words were left over: "hello". Quote words that belong together: delta run … "write hello".');
    const ws = join(root, "ws-words");
    await delta(["run", "--agent", agent, "-w", ws, "--run-id", "w1", "go"], { env: modelEnv(server.baseUrl) });
    const twoMessages = await delta(["continue", "--run-id", "w1", "-w", ws, "-m", "one", "two"], { env: modelEnv(server.baseUrl) });
    expect(twoMessages.exitCode).toBe(126);
    expect(twoMessages.stderr).toContain('The message was given twice: as "two" and as -m "one".');
    expect(server.requests).toHaveLength(1);
    expect(userMessages(ws, "w1")).toEqual(["go"]);
  });

  it("an empty task argument (an unset variable) is refused, and `-` reads the task from stdin as -m - does", async () => {
    server = await serve([reply.text("done")]);
    const agent = writeAgent(root, {}, "agent-empty-arg");
    const empty = await delta(["run", "--agent", agent, "-y", ""], { env: modelEnv(server.baseUrl) });
    expect(empty.exitCode).toBe(126);
    expect(empty.stderr).toContain("The task is empty (is the variable it came from unset?)");
    const dash = await delta(["run", "--agent", agent, "-w", join(root, "ws-dash"), "-"], { env: modelEnv(server.baseUrl), input: "from stdin\n" });
    expect(dash.exitCode, dash.stderr).toBe(0);
    expect(taskOf(server.requests[0]!)).toBe("from stdin");
  });
});

describe("mistakes get the fix", () => {
  it("a mistyped option or command gets a did-you-mean and 126, in JSON too", async () => {
    const option = await delta(["run", "--agent", root, "--formt", "json", "task"]);
    expect(option.exitCode).toBe(126);
    expect(option.stderr).toBe("Error: Unknown option `--formt`. Did you mean --format? See: delta run --help\n");
    const command = await delta(["runn", "--agent", root, "task"]);
    expect(command.exitCode).toBe(126);
    expect(command.stderr).toBe("Error: Unknown command 'runn'. Did you mean run? See: delta --help\n");
    const inJson = await delta(["list-runs", "-w", root, "--resumble", "--json"]);
    expect(inJson.exitCode).toBe(126);
    expect(JSON.parse(inJson.stdout)).toMatchObject({ status: "REFUSED", error: { type: "USAGE_ERROR", message: expect.stringContaining("Did you mean --resumable?") } });
    const value = await delta(["list-runs", "-w", root, "--format", "jsn"]);
    expect(value.stderr).toContain("Did you mean json?");
  });

  it("--json is --format json; -v is --verbose, -V the version, and delta -v alone says so", async () => {
    server = await serve([reply.text("the answer")]);
    const agent = writeAgent(root, {}, "agent-json");
    const result = await delta(["run", "--agent", agent, "-w", join(root, "ws-json"), "-v", "--json", "task"], { env: modelEnv(server.baseUrl) });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: "COMPLETED", result: "the answer" });
    expect(result.stderr).toContain("[log] ");
    const version = await delta(["-V"]);
    expect(version.stdout).toMatch(/^delta\/\d+\.\d+\.\d+/);
    expect((await delta(["run", "--version"])).stdout).toBe(version.stdout);
    const lowercase = await delta(["-v"]);
    expect(lowercase.exitCode).toBe(126);
    expect(lowercase.stderr).toContain("Unknown option `-v`. Did you mean -V (--version)?");
  });

  it("--json beside another --format is refused (126) naming both, in JSON as --json asked", async () => {
    const result = await delta(["list-runs", "-w", root, "--json", "--format", "text"]);
    expect(result.exitCode).toBe(126);
    expect(result.stderr).toBe("Error: --json is --format json, and --format text was given too; give one of them.\n");
    expect(JSON.parse(result.stdout)).toMatchObject({ status: "REFUSED", error: { type: "USAGE_ERROR" } });
  });
});

describe("a newcomer's mistakes in an agent's files", () => {
  /** `delta run --agent <name> "hi"` from the folder that holds the agent, as a user types it. */
  async function runIn(name: string, files: Record<string, string>): Promise<{ exitCode: number; stderr: string }> {
    const dir = join(root, "mistakes");
    const agent = join(dir, name);
    mkdirSync(agent, { recursive: true });
    writeFileSync(join(agent, "system_prompt.md"), "You help.");
    writeFileSync(join(agent, "context.yaml"), "sources:\n  - type: file\n    path: '${AGENT_HOME}/system_prompt.md'\n  - type: journal\n");
    for (const [file, content] of Object.entries(files)) writeFileSync(join(agent, file), content);
    return delta(["run", "--agent", name, "-y", "hi"], { cwd: dir, env: modelEnv("http://127.0.0.1:9/v1") });
  }

  it("an indentation slip is said in our words, at the line to fix", async () => {
    const result = await runIn("indent", { "agent.yaml": "name: indent\nllm:\n  model: gpt-4o\n tools:\n  - name: x\n    exec: \"echo hi\"\n" });
    expect(result.exitCode).toBe(126);
    expect(result.stderr).toContain("Error: indent/agent.yaml:4:2: line 4 is indented by 1 space, but the lines above it start at 2 spaces (`model:`, line 3), 0 spaces (`llm:`, line 2).");
  });

  it("a misspelt placeholder is named with the parameter it was meant for", async () => {
    const result = await runIn("typo", { "agent.yaml": "name: typo\nllm:\n  model: gpt-4o\ntools:\n  - name: cat\n    exec: \"cat -- ${pathh}\"\n    parameters:\n      - name: path\n        type: string\n" });
    expect(result.exitCode).toBe(126);
    expect(result.stderr).toContain("typo/agent.yaml: tools[0].parameters[0] (tool 'cat'): Parameter 'path' is not used in the template, which has ${pathh} instead: did you mean ${path}?");
  });

  it("a missing hook command names the hooks file by its path, as other errors name theirs", async () => {
    const result = await runIn("hooked", { "agent.yaml": "name: hooked\nllm:\n  model: gpt-4o\ntools:\n  - name: x\n    exec: \"echo hi\"\n", "hooks.yaml": "pre_tool_execution:\n  command: [\"./nope.sh\"]\n" });
    expect(result.exitCode).toBe(126);
    expect(result.stderr).toMatch(/^Error: hooked\/hooks\.yaml: pre_tool_execution\.command\[0\]: "\.\/nope\.sh" does not exist/m);
    expect(existsSync(join(root, "mistakes", "hooked", "workspaces"))).toBe(false);
  });
});

describe("the command that resumes a run", () => {
  it("after a --replay run carries --replay, and goes on replaying as printed", async () => {
    const agent = writeAgent(root, {}, "agent-replayed");
    const recording = join(root, "asks first.jsonl");
    writeFileSync(recording, `${[{ content: null, tool_calls: [{ name: "ask_human", arguments: '{"prompt":"Which color?"}' }] }, { content: "blue it is", tool_calls: [] }].map((line) => JSON.stringify(line)).join("\n")}\n`);
    const ws = join(root, "ws-replayed");
    const asked = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "r1", "--replay", recording, "pick a color"]);
    expect(asked.exitCode).toBe(101);
    const printed = /Answer with: (.*)\n/.exec(asked.stderr)![1]!;
    expect(printed).toBe(`delta continue --run-id r1 -w ${ws} --replay '${recording}' -m '<answer>'`);
    const words = (shellQuote.parse(printed) as string[]).slice(1).map((word) => (word === "<answer>" ? "blue" : word));
    const answered = await delta([...words, "--json"]);
    expect(answered.exitCode, answered.stderr).toBe(0);
    expect(JSON.parse(answered.stdout)).toMatchObject({ status: "COMPLETED", result: "blue it is" });
  });
});

describe("--last from anywhere", () => {
  it("show, continue and list-runs in a folder with no runs find the user's most recent run and say where it is", async () => {
    server = await serve([reply.text("first"), reply.text("continued")]);
    const state = join(root, "state-last");
    const env = modelEnv(server.baseUrl, { XDG_STATE_HOME: state });
    const agent = writeAgent(root, {}, "agent-last");
    const here = join(root, "somewhere-else");
    mkdirSync(here);
    const run = await delta(["run", "--agent", agent, "-y", "--run-id", "newest", "count the files"], { env, cwd: root });
    expect(run.exitCode, run.stderr).toBe(0);
    const ws = join(agent, "workspaces", "W001");

    const shown = await delta(["show", "--last"], { env, cwd: here });
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("Run newest");
    expect(shown.stderr).toContain(`no runs in ${here}: taking your most recent run, newest in ${ws} (from ${join(state, "delta", "runs.jsonl")})`);

    const listed = await delta(["list-runs"], { env, cwd: here });
    expect(listed.stdout).toBe("");
    expect(listed.stderr).toContain(`No runs found in ${here}\nYour most recent runs are in:\n  ${ws}    delta list-runs -w ${ws}\n`);

    // Every command that takes --last finds it the same way: verify and report too.
    const verified = await delta(["verify", "--last"], { env, cwd: here });
    expect(verified.exitCode, verified.stderr).toBe(0);
    expect(verified.stderr).toContain(`taking your most recent run, newest in ${ws}`);
    const page = join(root, "newest.html");
    const reported = await delta(["report", "--last", "-o", page], { env, cwd: here });
    expect(reported.exitCode, reported.stderr).toBe(0);
    expect(readFileSync(page, "utf8")).toContain("count the files");

    const continued = await delta(["continue", "--last", "and the folders"], { env, cwd: here });
    expect(continued.exitCode, continued.stderr).toBe(0);
    expect(userMessages(ws, "newest")).toEqual(["count the files", "and the folders"]);
    expect(readFileSync(join(state, "delta", "runs.jsonl"), "utf8").trimEnd().split("\n")).toHaveLength(2);
  });

  it("with no run anywhere, --last is refused pointing at --agent and -w, and list-runs points at them too", async () => {
    const env = { XDG_STATE_HOME: join(root, "state-empty") };
    const nowhere = join(root, "no-runs-here");
    mkdirSync(nowhere);
    for (const command of [["show", "--last"], ["continue", "--last", "go on"]]) {
      const result = await delta(command, { env, cwd: nowhere });
      expect(result.exitCode, command.join(" ")).toBe(126);
      expect(result.stderr).toContain(`no runs in ${nowhere}, and your run index (${join(root, "state-empty", "delta", "runs.jsonl")}) points at none that still exists.`);
      expect(result.stderr).toContain("give the same --agent or -w");
    }
    const listed = await delta(["list-runs"], { env, cwd: nowhere });
    expect(listed.exitCode).toBe(0);
    expect(listed.stderr).toBe(`No runs found in ${nowhere}\nA run started with --agent <dir> is listed with the same --agent, one started with -w <dir> with the same -w.\n`);
  });

  it("a run whose index cannot be written runs as ever and says nothing of it", async () => {
    server = await serve([reply.text("done")]);
    const agent = writeAgent(root, {}, "agent-no-index");
    // A file where the state folder would be: nothing can be made below it.
    const blocked = join(root, "state-is-a-file");
    writeFileSync(blocked, "");
    const env = modelEnv(server.baseUrl, { XDG_STATE_HOME: blocked });
    const ws = join(root, "ws-unindexed");
    const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "quiet", "go"], { env });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toBe(`Run quiet in ${ws}\n[1] THINK: done\n`);
    expect(readFileSync(blocked, "utf8")).toBe("");
  });
});
