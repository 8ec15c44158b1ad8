// End to end: MCP server processes across an engine's life: kill -9 mid-call and continue, SIGINT and SIGTERM, and servers that fail to start.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { everythingServer, filesystemServer, fixtureServer, logged, loggedRequests, stdioServerYaml, toolCalls } from "../support/mcp-servers.js";
import { reply, startMockLlm, toolResultsOf, type MockLlm } from "../support/mock-llm.js";
import { processStartedAt } from "../../src/process/proc-stat.js";
import { pauseGate } from "../support/pause-points.js";
import { deathWatchOf, groupEmptiesSoon, groupMembers } from "../support/processes.js";
import { actionResults, delta, eventTypes, modelEnv, readEvents, readMetadataFile, runDir, spawnDelta, waitFor, writeAgent, setUpE2e } from "./harness.js";

const { root } = setUpE2e("delta-mcp-life-");
let model: MockLlm;
const groups: number[] = [];
afterEach(async () => {
  await model?.close();
  for (const pgid of groups.splice(0)) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // Already gone, as it should be.
    }
  }
});

const LONG_CALL = { name: "ev__trigger-long-running-operation", arguments: { duration: 60, steps: 60 } };

/** An agent whose one server is the everything server behind the request log; `linger` makes it ignore stdin EOF. */
function everythingAgent(name: string, log: string, linger = false): string {
  const server = stdioServerYaml("ev", logged(log, everythingServer(), { linger }), "    tools:\n      allow: [trigger-long-running-operation, echo]\n");
  return writeAgent(root, { agentYaml: `name: ${name}\nllm:\n  model: mock-model\nmcp_servers:\n${server}` }, name);
}

/** Live processes whose command line mentions `text`. */
function processesRunning(text: string): number[] {
  return readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).map(Number).filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      return stat.charAt(stat.lastIndexOf(")") + 2) !== "Z" && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(text);
    } catch {
      return false;
    }
  });
}

/** The server's process group, from metadata.json once the run has started. */
function serverGroup(ws: string, runId: string): number {
  const [recorded] = readMetadataFile(ws, runId).mcp_server_processes as { pid: number }[];
  groups.push(recorded!.pid);
  return recorded!.pid;
}

describe("kill -9 in the middle of an MCP call", () => {
  it("takes the server down with the engine; continue gives the synthesized result and never calls the server again", async () => {
    model = await startMockLlm([reply.toolCalls([LONG_CALL])]);
    const log = join(root, "crash.log");
    const agent = everythingAgent("agent-crash", log);
    const ws = join(root, "ws-crash");
    const child = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "c1", "-m", "go"], { env: modelEnv(model.baseUrl) });
    await waitFor(() => toolCalls(log).length === 1, 15_000, "the call reaching the server");
    const pgid = serverGroup(ws, "c1");
    expect(groupMembers(pgid).length).toBe(2);
    child.kill("SIGKILL");
    await child;
    // Busy with a 60 s call, the server would notice its stdin closing only at the end of it: the death watch kills its group now.
    expect(await groupEmptiesSoon(pgid)).toBe(true);

    model.push(reply.text("recovered"));
    const resumed = await delta(["continue", "--run-id", "c1", "-w", ws, "--format", "json"], { env: modelEnv(model.baseUrl) });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: "COMPLETED", result: "recovered" });
    expect(eventTypes(readEvents(ws, "c1"))).toEqual([
      "ENGINE_START", "USER_MESSAGE", "THOUGHT", "ACTION_REQUEST", "ERROR", "ENGINE_END",
      "ENGINE_START", "ACTION_RESULT", "THOUGHT", "ENGINE_END",
    ]);
    expect(actionResults(ws, "c1")[0]).toMatchObject({ status: "ERROR", observation_content: expect.stringContaining("may or may not have taken effect") });
    expect(toolResultsOf(model.requests.at(-1)!)[0]).toContain("may or may not have taken effect");
    // The continue started the server anew (a second initialize) and sent it no call.
    expect(loggedRequests(log).filter((entry) => entry.method === "initialize")).toHaveLength(2);
    expect(toolCalls(log)).toEqual(["trigger-long-running-operation"]);
    expect(await groupEmptiesSoon(serverGroup(ws, "c1"))).toBe(true);
  });

  it("after the server did the work and before its result is journaled: continue gives the synthesized result and never writes again", async () => {
    model = await startMockLlm([reply.toolCalls([{ name: "fs__write_file", arguments: { path: "order.txt", content: "one crate of pears" } }])]);
    const log = join(root, "paused.log");
    const agent = writeAgent(root, { agentYaml: `name: paused\nllm:\n  model: mock-model\nmcp_servers:\n${stdioServerYaml("fs", logged(log, filesystemServer("${CWD}")))}` }, "agent-paused");
    const ws = join(root, "ws-paused");
    mkdirSync(ws);
    // The engine stops, its event loop blocked, on the line before ACTION_RESULT is written: the call has come back by then.
    const gate = pauseGate("journal-append:ACTION_RESULT", root);
    const child = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "p1", "-m", "order"], { env: modelEnv(model.baseUrl, gate.env) });
    await gate.reached();
    expect(readFileSync(join(ws, "order.txt"), "utf8")).toBe("one crate of pears");
    const pgid = serverGroup(ws, "p1");
    child.kill("SIGKILL");
    await child;
    expect(await groupEmptiesSoon(pgid)).toBe(true);
    expect(eventTypes(readEvents(ws, "p1")).at(-1)).toBe("ACTION_REQUEST");

    model.push(reply.text("ordered"));
    const resumed = await delta(["continue", "--run-id", "p1", "-w", ws, "--format", "json"], { env: modelEnv(model.baseUrl) });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(actionResults(ws, "p1")).toEqual([expect.objectContaining({ tool_name: "fs__write_file", status: "ERROR", observation_content: expect.stringContaining("may or may not have taken effect") })]);
    expect(toolResultsOf(model.requests.at(-1)!)[0]).toContain("may or may not have taken effect");
    expect(loggedRequests(log).filter((entry) => entry.method === "initialize")).toHaveLength(2);
    expect(toolCalls(log)).toEqual(["write_file"]);
  });

  it("a server that outlives both the engine and its death watch is stopped by the next continue", async () => {
    model = await startMockLlm([reply.toolCalls([LONG_CALL])]);
    const log = join(root, "linger.log");
    const agent = everythingAgent("agent-linger", log, true);
    const ws = join(root, "ws-linger");
    const child = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "l1", "-m", "go"], { env: modelEnv(model.baseUrl) });
    await waitFor(() => toolCalls(log).length === 1, 15_000, "the call reaching the server");
    const pgid = serverGroup(ws, "l1");
    const watch = deathWatchOf(pgid);
    expect(watch).not.toBeNull();
    process.kill(watch!, "SIGKILL");
    child.kill("SIGKILL");
    await child;
    await waitFor(() => loggedRequests(log).some((entry) => entry.event === "stdin closed"), 5_000, "the server seeing its stdin closed");
    expect(groupMembers(pgid).length).toBe(2);

    model.push(reply.text("recovered"));
    const resumed = await delta(["continue", "--run-id", "l1", "-w", ws], { env: modelEnv(model.baseUrl) });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`[Janitor] Stopped MCP server 'ev' (process group ${pgid}), left running by the engine that stopped`);
    expect(await groupEmptiesSoon(pgid)).toBe(true);
    expect(toolCalls(log)).toEqual(["trigger-long-running-operation"]);
  });
});

describe("kill -9 and a lost metadata.json", () => {
  it("the dead holder's owner record names its servers: continue stops one that outlived everything though metadata.json was rebuilt", async () => {
    model = await startMockLlm([reply.toolCalls([LONG_CALL])]);
    const log = join(root, "rebuilt.log");
    const agent = everythingAgent("agent-rebuilt", log, true);
    const ws = join(root, "ws-rebuilt");
    const child = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "r1", "-m", "go"], { env: modelEnv(model.baseUrl) });
    await waitFor(() => toolCalls(log).length === 1, 15_000, "the call reaching the server");
    const pgid = serverGroup(ws, "r1");
    const ownerRecord = JSON.parse(readFileSync(join(runDir(ws, "r1"), ".lock", "1.json"), "utf8")) as { server_groups?: Array<{ server: string; pgid: number }> };
    expect(ownerRecord.server_groups).toEqual([expect.objectContaining({ server: "ev", pgid })]);
    process.kill(deathWatchOf(pgid)!, "SIGKILL");
    child.kill("SIGKILL");
    await child;
    await waitFor(() => loggedRequests(log).some((entry) => entry.event === "stdin closed"), 5_000, "the server seeing its stdin closed");
    expect(groupMembers(pgid).length).toBe(2);
    rmSync(join(runDir(ws, "r1"), "metadata.json"));

    model.push(reply.text("recovered"));
    const resumed = await delta(["continue", "--run-id", "r1", "-w", ws], { env: modelEnv(model.baseUrl) });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain("Rebuilt it from the journal");
    expect(resumed.stderr).toContain(`[Janitor] Stopped MCP server 'ev' (process group ${pgid}), left running by the engine that stopped`);
    expect(await groupEmptiesSoon(pgid)).toBe(true);
  });
});

describe("continue after a run that ended cleanly", () => {
  it("stops no process group, even one that now has a recorded server's pid and start", async () => {
    model = await startMockLlm([reply.text("done")]);
    const agent = everythingAgent("agent-clean", join(root, "clean.log"));
    const ws = join(root, "ws-clean");
    const first = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "c1", "-m", "go"], { env: modelEnv(model.baseUrl) });
    expect(first.exitCode, first.stderr).toBe(0);
    // What pid reuse can make of a recorded server: another group, led by a process with the recorded pid and start.
    const other = spawn("sh", ["-c", "sleep 60 & wait"], { detached: true, stdio: "ignore" });
    groups.push(other.pid!);
    await waitFor(() => groupMembers(other.pid!).length === 2, 5_000, "the other group running");
    const metadataPath = join(runDir(ws, "c1"), "metadata.json");
    const metadata = JSON.parse(readFileSync(metadataPath, "utf8")) as Record<string, unknown>;
    expect(metadata.mcp_server_processes).toHaveLength(1);
    writeFileSync(metadataPath, JSON.stringify({ ...metadata, mcp_server_processes: [{ server: "ev", pid: other.pid, start_time_unix: processStartedAt(other.pid!) }] }));

    model.push(reply.text("again"));
    const resumed = await delta(["continue", "--run-id", "c1", "-w", ws, "-m", "once more"], { env: modelEnv(model.baseUrl) });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stderr).not.toContain("[Janitor] Stopped");
    expect(groupMembers(other.pid!)).toHaveLength(2);
  });
});

describe.each(["SIGINT", "SIGTERM"] as const)("%s in the middle of an MCP call", (signal) => {
  it("cancels the call, exits 130 with an INTERRUPTED run, and leaves no server process behind", async () => {
    model = await startMockLlm([reply.toolCalls([LONG_CALL])]);
    const log = join(root, `${signal}.log`);
    const agent = everythingAgent(`agent-${signal}`, log);
    const ws = join(root, `ws-${signal}`);
    const child = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "s1", "-m", "go", "--format", "json"], { env: modelEnv(model.baseUrl) });
    await waitFor(() => toolCalls(log).length === 1, 15_000, "the call reaching the server");
    const pgid = serverGroup(ws, "s1");
    child.kill(signal);
    const result = await child;
    expect(result.exitCode).toBe(130);
    expect(JSON.parse(String(result.stdout))).toMatchObject({ status: "INTERRUPTED" });
    expect(actionResults(ws, "s1")[0]).toMatchObject({ status: "ERROR", observation_content: "[interrupted; the request was cancelled]" });
    // The engine waits for the group to stop before it exits: nothing is left to wait for.
    expect(groupMembers(pgid)).toEqual([]);
    expect(deathWatchOf(pgid)).toBeNull();
  });
});

describe("a server that fails in the middle of a run", () => {
  it("a call that times out is an ERROR and the run goes on; a server that dies says how, and so does the next call to it", async () => {
    model = await startMockLlm([
      reply.toolCalls([{ name: "fragile__stall", arguments: {} }]),
      reply.toolCalls([{ name: "fragile__crash", arguments: {} }]),
      reply.toolCalls([{ name: "fragile__stall", arguments: {} }]),
      reply.text("noted"),
    ]);
    // Long enough for a busy machine to start the server; the stalled call is cut at it.
    const agent = writeAgent(root, { agentYaml: `name: fragile\nllm:\n  model: mock-model\nmcp_servers:\n${stdioServerYaml("fragile", fixtureServer("fragile-server"), "    timeout_ms: 10000\n")}` }, "agent-fragile");
    const ws = join(root, "ws-fragile");
    const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "f1", "-m", "go", "--format", "json"], { env: modelEnv(model.baseUrl) });
    expect(run.exitCode, run.stderr).toBe(0);
    const gone = "its process exited with code 7; its stderr ended with:\n  fragile-server: out of memory in crash";
    expect(actionResults(ws, "f1").map((event) => [event.status, event.observation_content])).toEqual([
      ["ERROR", "[timed out after 10000 ms; the request was cancelled]"],
      ["ERROR", `The MCP server stopped: ${gone}`],
      ["ERROR", `The MCP server is not running: ${gone}`],
    ]);
  });
});

describe("a stdio server that fails to start or to list its tools", () => {
  /** The server that never answers is given 1.5 s; the others as long as a busy machine may need to start them. */
  const TIMEOUT_MS = 1_500;
  const timeoutOf = (fixture: string): number => (fixture === "hang-at-initialize" ? TIMEOUT_MS : 60_000);
  it.each([
    ["hang-at-initialize", `did not answer initialize within ${TIMEOUT_MS} ms (its timeout_ms: fix the server, or raise timeout_ms if it is only slow to start); its stderr ended with:\n  hang-at-initialize: up, reading requests, answering none`],
    ["exit-at-start", "stopped before answering initialize: its process exited with code 3; its stderr ended with:\n  exit-at-start: fatal: DATABASE_URL is not set"],
    [
      "garbage-on-stdout",
      'broke the protocol while answering initialize: it wrote a line to stdout that is not a JSON-RPC message: "Welcome to the garbage server v1.0!" (an MCP server writes only protocol messages to stdout, and logs to stderr); its stderr ended with:\n  garbage-on-stdout: starting',
    ],
    ["error-at-list", "failed at tools/list: MCP error -32603: tool index unavailable; its stderr ended with:\n  error-at-list: cannot open the tool index"],
  ] as const)("%s: refused (126), naming the server and its stderr, leaving no trace", async (fixture, why) => {
    const agent = writeAgent(root, { agentYaml: `name: bad\nllm:\n  model: mock-model\nmcp_servers:\n${stdioServerYaml("flaky", fixtureServer(fixture), `    timeout_ms: ${timeoutOf(fixture)}\n`)}` }, `agent-${fixture}`);
    const ws = join(root, `ws-${fixture}`);
    const run = await delta(["run", "--agent", agent, "-w", ws, "-m", "x", "--format", "json"], { env: modelEnv("http://127.0.0.1:9/v1") });
    expect(run.exitCode).toBe(126);
    expect(JSON.parse(run.stdout).error).toEqual({ type: "MCP_SERVER_ERROR", message: `MCP server 'flaky' (${join(agent, "agent.yaml")}: mcp_servers[0]) ${why}` });
    expect(existsSync(ws)).toBe(false);
  });

  it("a server that closed its input before initialize was written: the same refusal with its exit code, though the write failed first", async () => {
    const go = join(root, "close-stdin.go");
    const argv = [...fixtureServer("close-stdin-at-start"), go];
    const agent = writeAgent(root, { agentYaml: `name: bad\nllm:\n  model: mock-model\nmcp_servers:\n${stdioServerYaml("flaky", argv, "    timeout_ms: 60000\n")}` }, "agent-close-stdin");
    const ws = join(root, "ws-close-stdin");
    const gate = pauseGate("mcp-before-initialize", root);
    const running = delta(["run", "--agent", agent, "-w", ws, "-m", "x", "--format", "json"], { env: { ...modelEnv("http://127.0.0.1:9/v1"), ...gate.env } });
    // The engine stands before its first write while the server closes its stdin: that write fails (EPIPE), and the
    // server, still running, exits 300 ms after `go`.
    await gate.reached();
    await waitFor(() => existsSync(`${go}.closed`), 20_000, "the server closing its stdin");
    writeFileSync(go, "");
    gate.open();
    const run = await running;
    expect(run.exitCode).toBe(126);
    const why = "stopped before answering initialize: its process exited with code 3; its stderr ended with:\n  close-stdin-at-start: no input wanted";
    expect(JSON.parse(run.stdout).error).toEqual({ type: "MCP_SERVER_ERROR", message: `MCP server 'flaky' (${join(agent, "agent.yaml")}: mcp_servers[0]) ${why}` });
    expect(existsSync(ws)).toBe(false);
  });

  it("on continue: refused (126) before the journal or metadata.json change; the run goes on once the server starts again", async () => {
    model = await startMockLlm([reply.text("first"), reply.text("second")]);
    // A real server's start on a busy machine can pass 1.5 s; the refused start below exits at once whatever the timeout.
    const yamlOf = (argv: string[]): string => `name: later\nllm:\n  model: mock-model\nmcp_servers:\n${stdioServerYaml("fs", argv, "    timeout_ms: 30000\n")}`;
    const agent = writeAgent(root, { agentYaml: yamlOf(filesystemServer("${CWD}")) }, "agent-later");
    const ws = join(root, "ws-later");
    const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "r1", "-m", "one"], { env: modelEnv(model.baseUrl) });
    expect(run.exitCode, run.stderr).toBe(0);
    const journal = readFileSync(join(runDir(ws, "r1"), "journal.jsonl"), "utf8");
    const metadata = readFileSync(join(runDir(ws, "r1"), "metadata.json"), "utf8");

    writeFileSync(join(agent, "agent.yaml"), yamlOf(fixtureServer("exit-at-start")));
    const refused = await delta(["continue", "--run-id", "r1", "-w", ws, "-m", "two", "--format", "json"], { env: modelEnv(model.baseUrl) });
    expect(refused.exitCode).toBe(126);
    expect(JSON.parse(refused.stdout).error).toMatchObject({ type: "MCP_SERVER_ERROR", message: expect.stringMatching(/^MCP server 'fs' \(\/\S+\/agent\.yaml: mcp_servers\[0\]\) stopped before answering initialize: .*DATABASE_URL is not set$/s) });
    expect(readFileSync(join(runDir(ws, "r1"), "journal.jsonl"), "utf8")).toBe(journal);
    expect(readFileSync(join(runDir(ws, "r1"), "metadata.json"), "utf8")).toBe(metadata);
    expect(model.requests).toHaveLength(1);

    writeFileSync(join(agent, "agent.yaml"), yamlOf(filesystemServer("${CWD}")));
    const resumed = await delta(["continue", "--run-id", "r1", "-w", ws, "-m", "two", "--format", "json"], { env: modelEnv(model.baseUrl) });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: "COMPLETED", result: "second" });
  });

  it("a refusal quoting the server's stderr has the values it was given from the environment redacted", async () => {
    const token = "leaky-token-0123456789";
    const server = stdioServerYaml("leaky", ["sh", "-c", 'echo "connecting with $API_TOKEN" >&2; exit 1'], "    env:\n      API_TOKEN: {env: DELTA_TEST_LEAKY_TOKEN}\n");
    const agent = writeAgent(root, { agentYaml: `name: bad\nllm:\n  model: mock-model\nmcp_servers:\n${server}` }, "agent-leaky");
    const run = await delta(["run", "--agent", agent, "-y", "-m", "x", "--format", "json", "-v"], { env: modelEnv("http://127.0.0.1:9/v1", { DELTA_TEST_LEAKY_TOKEN: token }) });
    expect(run.exitCode).toBe(126);
    expect(JSON.parse(run.stdout).error.message).toContain("its stderr ended with:\n  connecting with [REDACTED]");
    expect(run.stderr).toContain("stderr: connecting with [REDACTED]");
    expect(run.stdout + run.stderr).not.toContain(token);
  });

  it("SIGINT while a server starts: exit 130 at once, no run, no server process left", async () => {
    const agent = writeAgent(root, { agentYaml: `name: bad\nllm:\n  model: mock-model\nmcp_servers:\n${stdioServerYaml("slow", fixtureServer("hang-at-initialize"), "    timeout_ms: 60000\n")}` }, "agent-start-int");
    const ws = join(root, "ws-start-int");
    const child = spawnDelta(["run", "--agent", agent, "-w", ws, "-m", "x", "--format", "json", "-v"], { env: modelEnv("http://127.0.0.1:9/v1") });
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    await waitFor(() => stderr.includes("hang-at-initialize: up"), 15_000, "the server started");
    // The server would hang for its whole 60 s timeout: only the interrupt ends the start.
    child.kill("SIGINT");
    const result = await child;
    expect(result.exitCode).toBe(130);
    expect(JSON.parse(String(result.stdout))).toMatchObject({ status: "INTERRUPTED", error: { type: "INTERRUPTED", message: `Interrupted while starting MCP server 'slow' (${join(agent, "agent.yaml")}: mcp_servers[0])` } });
    expect(existsSync(ws)).toBe(false);
    expect(processesRunning("hang-at-initialize.mjs")).toEqual([]);
  });

  it("a command that does not exist is refused naming it", async () => {
    const agent = writeAgent(root, { agentYaml: `name: bad\nllm:\n  model: mock-model\nmcp_servers:\n${stdioServerYaml("gone", ["no-such-mcp-server-binary", "--stdio"])}` }, "agent-missing");
    const run = await delta(["run", "--agent", agent, "-y", "-m", "x", "--format", "json"], { env: modelEnv("http://127.0.0.1:9/v1") });
    expect(run.exitCode).toBe(126);
    expect(JSON.parse(run.stdout).error.message).toBe(
      `MCP server 'gone' (${join(agent, "agent.yaml")}: mcp_servers[0]) could not start: command not found: no-such-mcp-server-binary (command: ["no-such-mcp-server-binary","--stdio"])`,
    );
  });
});
