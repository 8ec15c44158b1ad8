// End to end: tools that leave processes behind (a daemon holding stdout) and interrupting a run whose tool, hook or MCP server hangs.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { readJournal } from "../support/journal-read.js";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { reply, startMockLlm, type MockLlm } from "../support/mock-llm.js";
import { diesSoon, pidFrom } from "../support/processes.js";

import { stdioServerYaml } from "../support/mcp-servers.js";
import { actionResults, delta, modelEnv, readEvents, runDir, spawnDelta, waitFor, writeAgent, setUpE2e } from "./harness.js";

const { root } = setUpE2e("delta-tool-processes-");
let server: MockLlm | undefined;
/** Daemons the tests started outside any process group the engine could kill. */
const daemons: string[] = [];

afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const pidFile of daemons.splice(0)) {
    if (!existsSync(pidFile)) continue;
    try {
      process.kill(Number(readFileSync(pidFile, "utf8")), "SIGKILL");
    } catch {
      // Already gone.
    }
  }
});

/** A "start the dev server" tool: the server leaves the tool's process group (setsid) and keeps its stdout. */
const DAEMON_TOOLS = `tools:
  - name: start_server
    shell: "setsid sh -c 'echo $$ > daemon.pid; exec sleep 1000' & echo started"
  - name: start_server_slowly
    shell: "setsid sh -c 'echo $$ > daemon.pid; exec sleep 1000' & echo starting; sleep 1000"
    timeout_ms: 500
`;

describe("a tool that starts a daemon which keeps the output open", () => {
  it("completes the run with the tool's output recorded and a note, and the engine exits promptly", async () => {
    server = await startMockLlm([reply.toolCalls([{ name: "start_server", arguments: {} }]), reply.text("server is up")]);
    const agent = writeAgent(root, { tools: DAEMON_TOOLS }, "agent-daemon");
    const ws = join(root, "ws-daemon");
    daemons.push(join(ws, "daemon.pid"));
    // The daemon keeps the tool's stdout open for 1,000 s: an engine that waited for it would meet the kill at 60 s.
    const result = await spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "daemon", "-m", "start it", "--format", "raw"], { env: modelEnv(server.baseUrl), timeoutMs: 60_000 });
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(result.stdout).toBe("server is up\n");
    const [recorded] = actionResults(ws, "daemon");
    expect(recorded).toMatchObject({ status: "SUCCESS", exit_code: 0 });
    expect(recorded?.observation_content).toMatch(/^started\n\[.*background process.*kept.*output open/);
    // The daemon still runs: the engine stopped waiting for it, it did not kill it.
    expect(() => process.kill(Number(readFileSync(join(ws, "daemon.pid"), "utf8")), 0)).not.toThrow();
  });

  it("still times out a tool that hangs after starting such a daemon, and settles without waiting for the daemon", async () => {
    server = await startMockLlm([reply.toolCalls([{ name: "start_server_slowly", arguments: {} }]), reply.text("gave up")]);
    const agent = writeAgent(root, { tools: DAEMON_TOOLS }, "agent-daemon-timeout");
    const ws = join(root, "ws-daemon-timeout");
    daemons.push(join(ws, "daemon.pid"));
    const result = await spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "daemon-timeout", "-m", "start it"], { env: modelEnv(server.baseUrl), timeoutMs: 60_000 });
    expect(result.exitCode, String(result.stderr)).toBe(0);
    const [recorded] = actionResults(ws, "daemon-timeout");
    expect(recorded).toMatchObject({ status: "ERROR" });
    expect(recorded?.observation_content).toContain("starting\n");
    expect(recorded?.observation_content).toContain("[timed out after 500 ms");
  });
});

describe("a second SIGINT", () => {
  /** A tool that ignores SIGTERM and SIGINT, so the first interrupt cannot end it before the kill grace. */
  const STUBBORN_TOOLS = `tools:
  - name: hang
    shell: "trap '' TERM INT; echo $$ > tool.pid; while :; do sleep 1; done"
  - name: wait
    shell: "echo $$ > tool.pid; exec sleep 1000"
`;

  it("exits 130 at once while a tool ignores the first one, and the tool's group does not outlive the engine", async () => {
    server = await startMockLlm([reply.toolCalls([{ name: "hang", arguments: {} }])]);
    const agent = writeAgent(root, { tools: STUBBORN_TOOLS }, "agent-hang");
    const ws = join(root, "ws-hang");
    const child = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "hang", "-m", "go"], { env: modelEnv(server.baseUrl) });
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const toolPid = await pidFrom(join(ws, "tool.pid"), 30_000);
    child.kill("SIGINT");
    await waitFor(() => stderr.includes("send it again to exit at once"), 30_000, "the first interrupt's notice");
    child.kill("SIGINT");
    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(130);
    // Ended by the second signal, not by the orderly path once the kill grace was over: no summary was printed.
    expect(String(result.stdout)).not.toContain("Run Summary");
    expect(await diesSoon(toolPid)).toBe(true);
  });

  it("exits 130 at once while the on_run_end hook of the interrupted run hangs", async () => {
    server = await startMockLlm([reply.toolCalls([{ name: "wait", arguments: {} }])]);
    const hooksYaml = JSON.stringify({ on_run_end: { command: ["sh", "-c", "echo $$ > hook.pid; exec sleep 1000"], timeout_ms: 600_000 } });
    const agent = writeAgent(root, { tools: STUBBORN_TOOLS, hooksYaml }, "agent-hang-hook");
    const ws = join(root, "ws-hang-hook");
    const child = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "hang-hook", "-m", "go"], { env: modelEnv(server.baseUrl) });
    await pidFrom(join(ws, "tool.pid"));
    child.kill("SIGINT");
    const hookPid = await pidFrom(join(ws, "hook.pid"), 30_000);
    // The hook would hang for its 600 s timeout: only the second signal ends the engine.
    child.kill("SIGINT");
    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(130);
    expect(readEvents(ws, "hang-hook").at(-1)).toMatchObject({ type: "ENGINE_END", status: "INTERRUPTED" });
    expect(await diesSoon(hookPid)).toBe(true);
  });
});

describe("a second SIGTERM", () => {
  /**
   * An MCP server that never answers a call, keeps running when its stdin closes, and notes the
   * SIGTERM of the engine's orderly shutdown (then ignores it), so that shutdown waits out its grace.
   */
  const STUBBORN_SERVER = `const { writeFileSync } = require("node:fs");
writeFileSync("server.pid", String(process.pid));
process.on("SIGTERM", () => writeFileSync("server.term", ""));
setInterval(() => {}, 1000);
require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
  const message = JSON.parse(line);
  if (message.method === "tools/call") return writeFileSync("server.called", "");
  if (message.id === undefined) return;
  const result = message.method === "initialize"
    ? { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "stubborn", version: "1.0.0" } }
    : message.method === "tools/list" ? { tools: [{ name: "wait", description: "Never answers", inputSchema: { type: "object", properties: {} } }] } : {};
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }) + "\\n");
});
`;

  it("ends the engine at once (130) while an MCP server ignores the first one's shutdown, the journal whole and the run resumable", async () => {
    server = await startMockLlm([reply.toolCalls([{ name: "stubborn__wait", arguments: {} }]), reply.text("resumed")]);
    const script = join(root, "stubborn-server.cjs");
    writeFileSync(script, STUBBORN_SERVER);
    const agent = writeAgent(root, { tools: `mcp_servers:\n${stdioServerYaml("stubborn", [process.execPath, script], "    sandbox: {mode: off}\n")}` }, "agent-stubborn-mcp");
    const ws = join(root, "ws-stubborn-mcp");
    const child = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "stubborn", "-m", "go"], { env: modelEnv(server.baseUrl) });
    const serverPid = await pidFrom(join(ws, "server.pid"), 15_000);
    await waitFor(() => existsSync(join(ws, "server.called")), 15_000, "the model's call reaching the server");
    child.kill("SIGTERM");
    // The engine's orderly shutdown has reached the server: it is waiting out the server's grace now.
    await waitFor(() => existsSync(join(ws, "server.term")), 15_000, "the shutdown signalling the server");
    child.kill("SIGTERM");
    const result = await child;
    expect(result.exitCode, String(result.stderr)).toBe(130);
    // Ended by the second signal, not by the orderly path finishing: no summary was printed.
    expect(String(result.stderr)).toContain("send it again to exit at once");
    expect(String(result.stdout)).not.toContain("Run Summary");
    expect(await diesSoon(serverPid)).toBe(true);
    // Every line of the journal is whole and in order, and the run goes on from it.
    const events = readJournal(join(runDir(ws, "stubborn"), "journal.jsonl"));
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
    expect(events.map((event) => event.type)).toContain("ACTION_REQUEST");
    const resumed = await delta(["continue", "--run-id", "stubborn", "-w", ws, "--format", "raw", "--accept-endpoint"], { env: modelEnv(server.baseUrl), timeoutMs: 30_000 });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stdout).toBe("resumed\n");
  }, 60_000);
});
