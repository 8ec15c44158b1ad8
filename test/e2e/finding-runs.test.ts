// End to end: finding runs (--agent, --last, list-runs), the exact resume command of every unfinished run, and FAILED runs retried without -m.
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { fault, reply, taskOf, type MockLlm } from "../support/mock-llm.js";
import { DELTA_BIN, NO_MODEL_KEYS, delta, eventTypes, modelEnv, readEvents, readMetadataFile, runDir, spawnDelta, waitFor, writeAgent, setUpE2e } from "./harness.js";

const { root, serve } = setUpE2e();
let server: MockLlm;


const workspaceOf = (agent: string, id: string): string => join(agent, "workspaces", id);

describe("finding a run across an agent's workspaces", () => {
  it("continues a run by id with --agent alone, and refuses an id two workspaces hold, naming both", async () => {
    server = await serve([reply.text("a"), reply.text("b"), reply.text("c"), reply.text("resumed")]);
    const agent = writeAgent(root, {}, "agent-find");
    const env = modelEnv(server.baseUrl);
    await delta(["run", "--agent", agent, "-y", "--run-id", "dup", "-m", "one"], { env });
    await delta(["run", "--agent", agent, "-y", "--run-id", "only", "-m", "two"], { env });
    await delta(["run", "--agent", agent, "-y", "--run-id", "dup", "-m", "three"], { env });

    const found = await delta(["continue", "--agent", agent, "--run-id", "only", "-m", "more", "--format", "json"], { env });
    expect(found.exitCode, found.stderr).toBe(0);
    expect(JSON.parse(found.stdout)).toMatchObject({ run_id: "only", result: "resumed", metadata: { workspace_path: workspaceOf(agent, "W002") } });

    const twice = await delta(["continue", "--agent", agent, "--run-id", "dup", "-m", "more", "--format", "json"], { env });
    expect(twice.exitCode).toBe(126);
    expect(JSON.parse(twice.stdout).error.message).toContain(`${workspaceOf(agent, "W001")} and ${workspaceOf(agent, "W003")}`);
    expect(server.requests).toHaveLength(4);
  });

  it("continues the newest run with --last, per workspace or per agent", async () => {
    server = await serve([reply.text("a"), reply.text("b"), reply.text("c"), reply.text("d"), reply.text("e")]);
    const agent = writeAgent(root, {}, "agent-last");
    const env = modelEnv(server.baseUrl);
    await delta(["run", "--agent", agent, "-y", "--run-id", "w1-old", "-m", "x"], { env });
    await delta(["run", "--agent", agent, "-w", workspaceOf(agent, "W001"), "--run-id", "w1-new", "-m", "x"], { env });
    await delta(["run", "--agent", agent, "-y", "--run-id", "w2-newest", "-m", "x"], { env });

    const perAgent = await delta(["continue", "--agent", agent, "--last", "-m", "again", "--format", "json"], { env });
    expect(JSON.parse(perAgent.stdout)).toMatchObject({ run_id: "w2-newest", status: "COMPLETED" });
    const perWorkspace = await delta(["continue", "-w", workspaceOf(agent, "W001"), "--last", "-m", "again", "--format", "json"], { env });
    expect(JSON.parse(perWorkspace.stdout)).toMatchObject({ run_id: "w1-new", status: "COMPLETED" });
  });

  it("lists every workspace's runs with --agent, each with its workspace, and refuses a -w that does not exist", async () => {
    server = await serve([reply.text("a"), reply.text("b")]);
    const agent = writeAgent(root, {}, "agent-list-all");
    const env = modelEnv(server.baseUrl);
    await delta(["run", "--agent", agent, "-y", "--run-id", "first", "-m", "x"], { env });
    await delta(["run", "--agent", join(agent, "agent.yaml"), "-y", "--run-id", "second", "-m", "x"], { env });

    const listed = await delta(["list-runs", "--agent", join(agent, "agent.yaml"), "--format", "json"]);
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).map((run: { run_id: string; work_dir: string }) => [run.run_id, run.work_dir])).toEqual([
      ["second", workspaceOf(agent, "W002")],
      ["first", workspaceOf(agent, "W001")],
    ]);

    const missing = await delta(["list-runs", "-w", join(root, "no-such-workspace")]);
    expect(missing.exitCode).toBe(126);
    expect(missing.stderr).toContain(`-w ${join(root, "no-such-workspace")}: no such directory`);
    expect(existsSync(join(root, "no-such-workspace"))).toBe(false);
  });
});

describe("the command that resumes a run", () => {
  it("is printed exactly, workspace included, after SIGINT, and works as printed", async () => {
    server = await serve([reply.toolCalls([{ name: "slow", arguments: {} }])]);
    const agent = writeAgent(root, { tools: 'tools:\n  - name: slow\n    shell: "touch started; sleep 30"\n' }, "agent-hint");
    const ws = join(root, "ws with space");
    const child = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "hint", "-m", "go"], { env: modelEnv(server.baseUrl) });
    await waitFor(() => existsSync(join(ws, "started")));
    child.kill("SIGINT");
    const interrupted = await child;
    expect(interrupted.exitCode).toBe(130);
    const command = /^To resume it: (delta continue .*)$/m.exec(String(interrupted.stderr))?.[1];
    expect(command).toBe(`delta continue --run-id hint -w '${ws}'`);
    expect(String(interrupted.stderr)).not.toContain("<id>");

    // A `delta` on PATH, so the printed line runs as a user would paste it.
    const bin = join(root, "bin");
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, "delta"), `#!/bin/sh\nexec "${process.execPath}" "${DELTA_BIN}" "$@"\n`);
    chmodSync(join(bin, "delta"), 0o755);
    server.push(reply.text("resumed"));
    const resumed = await execa("sh", ["-c", command!], { env: { ...NO_MODEL_KEYS, ...modelEnv(server.baseUrl), PATH: `${bin}:${process.env.PATH}` }, reject: false, cwd: root });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(readMetadataFile(ws, "hint").status).toBe("COMPLETED");
  });
});

describe("a FAILED run", () => {
  it("continues without -m: the engine asks the model again with the same conversation; with -m the message comes first", async () => {
    server = await serve([fault.status(401), reply.text("worked this time"), fault.status(401), reply.text("and this")]);
    const agent = writeAgent(root, {}, "agent-retry");
    const ws = join(root, "ws-retry");
    const failed = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "f", "-m", "the task"], { env: modelEnv(server.baseUrl) });
    expect(failed.exitCode).toBe(1);
    expect(failed.stderr).toContain(`To retry it (add -m <message> to tell the model something first): delta continue --run-id f -w ${ws}`);

    const retried = await delta(["continue", "--run-id", "f", "-w", ws, "--format", "raw"], { env: modelEnv(server.baseUrl) });
    expect(retried.exitCode, retried.stderr).toBe(0);
    expect(retried.stdout).toBe("worked this time\n");
    const users = (index: number) => (server.requests[index]!.body as { messages: { role: string; content: string }[] }).messages.filter((m) => m.role === "user").map((m) => m.content);
    expect(users(1)).toEqual(["the task"]);
    expect(eventTypes(readEvents(ws, "f")).filter((type) => type === "USER_MESSAGE")).toHaveLength(1);

    // A second failure, continued with a message: it is appended before the model is asked.
    const failedAgain = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "g", "-m", "task two"], { env: modelEnv(server.baseUrl) });
    expect(failedAgain.exitCode).toBe(1);
    const withMessage = await delta(["continue", "--run-id", "g", "-w", ws, "-m", "try the other endpoint", "--format", "raw"], { env: modelEnv(server.baseUrl) });
    expect(withMessage.exitCode, withMessage.stderr).toBe(0);
    expect(users(3)).toEqual(["task two", "try the other endpoint"]);
    expect(taskOf(server.requests[3]!)).toBe("task two");
  });
});

describe("a workspace of the original Delta Engine", () => {
  it("is read, not refused: new runs go beside the original's, list-runs shows both, and an original run is not continued", async () => {
    server = await serve([reply.text("new engine here")]);
    const agent = writeAgent(root, {}, "agent-original");
    const ws = join(root, "ws-original");
    const original = runDir(ws, "20251001_120000_abcdef");
    mkdirSync(original, { recursive: true });
    writeFileSync(join(ws, ".delta", "VERSION"), "1.2\n");
    writeFileSync(join(original, "metadata.json"), JSON.stringify({
      run_id: "20251001_120000_abcdef", start_time: "2025-10-01T12:00:00.000Z", end_time: "2025-10-01T12:01:00.000Z", agent_ref: agent,
      task: "the old task", status: "COMPLETED", iterations_completed: 3, pid: 1, hostname: "h", start_time_unix: 0, process_name: "node",
    }));
    writeFileSync(join(original, "journal.jsonl"), `${JSON.stringify({ seq: 1, timestamp: "2025-10-01T12:00:00.000Z", type: "RUN_START", payload: { run_id: "20251001_120000_abcdef", task: "the old task", agent_ref: agent } })}\n`);

    const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "new", "-m", "a new task", "--format", "raw"], { env: modelEnv(server.baseUrl) });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(readMetadataFile(ws, "new")).toMatchObject({ initial_message: "a new task", task: "a new task" });

    const listed = await delta(["list-runs", "-w", ws, "--format", "json"]);
    expect(listed.exitCode).toBe(0);
    expect(listed.stderr).toBe("");
    expect(JSON.parse(listed.stdout).map((r: { run_id: string; status: string; task_summary: string; original_engine: boolean }) => [r.run_id, r.status, r.task_summary, r.original_engine])).toEqual([
      ["new", "COMPLETED", "a new task", false],
      ["20251001_120000_abcdef", "COMPLETED", "the old task", true],
    ]);

    const refused = await delta(["continue", "--run-id", "20251001_120000_abcdef", "-w", ws, "-m", "more"], { env: modelEnv(server.baseUrl) });
    expect(refused.exitCode).toBe(126);
    expect(refused.stderr).toContain("original Delta Engine");
    expect(refused.stderr).toContain("delta run --agent");
  });
});
