// End to end: watching a run as it goes — the status line on a terminal (and not in a pipe), streamed text deltas, the duration, the question of ask_human, the resume command said once.
import { execa } from "execa";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fault, reply, type MockLlm } from "../support/mock-llm.js";
import { filesystemServer, stdioServerYaml } from "../support/mcp-servers.js";
import { DELTA_BIN, NO_MODEL_KEYS, delta, modelEnv, readEvents, writeAgent, setUpE2e } from "./harness.js";

const { root, serve } = setUpE2e();
let server: MockLlm;


const SSE = { "content-type": "text/event-stream" };
const chunk = (delta: object, finish: string | null = null): string => `data: ${JSON.stringify({ model: "mock-model", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
/** A streamed reply whose text arrives in pieces, 150 ms apart. */
const streamed = (pieces: string[]) =>
  reply.chunks(200, SSE, [
    ...pieces.map((text) => ({ afterMs: 150, data: chunk({ content: text }) })),
    { afterMs: 50, data: `${chunk({}, "stop")}data: [DONE]\n\n` },
  ]);

/** Runs `delta args…` with stdin, stdout and stderr on a pseudo-terminal (util-linux `script`), and returns everything it wrote there. */
async function onTerminal(args: string[], env: Record<string, string>): Promise<{ exitCode: number; screen: string }> {
  const command = [process.execPath, DELTA_BIN, ...args].map((word) => `'${word.replace(/'/g, "'\\''")}'`).join(" ");
  const result = await execa("script", ["-qefc", command, "/dev/null"], { env: { ...NO_MODEL_KEYS, TERM: "xterm", COLUMNS: "200", ...env }, reject: false, timeout: 60_000, stdin: "ignore" });
  return { exitCode: result.exitCode ?? -1, screen: String(result.stdout) };
}

describe("the status line", () => {
  it("on a terminal, says the iteration, the model and the seconds while the model works, then the tool while it runs, and is cleared", async () => {
    server = await serve([fault.delay(1200, reply.toolCalls([{ name: "nap", arguments: {} }])), reply.text("rested")]);
    const agent = writeAgent(root, { tools: "tools:\n  - name: nap\n    exec: \"sleep 1\"\n" }, "agent-tty");
    const { exitCode, screen } = await onTerminal(["run", "--agent", agent, "-w", join(root, "ws-tty"), "-m", "rest", "--format", "raw"], modelEnv(server.baseUrl));
    expect(exitCode, screen).toBe(0);
    // Redrawn in place: a carriage return and erase-line before each drawing, the elapsed time growing.
    expect(screen).toMatch(/\r\x1b\[2K\[1\] mock-model thinking · 0\.\ds/);
    expect(screen).toMatch(/\r\x1b\[2K\[1\] mock-model thinking · 1\.\ds/);
    expect(screen).toMatch(/\r\x1b\[2K\[1\] running nap · \d\.\ds/);
    // Cleared for good before the result is printed: after the last erase, no status is drawn again.
    const tail = screen.slice(screen.lastIndexOf("\x1b[2K"));
    expect(tail).toMatch(/rested$/);
    expect(tail).not.toMatch(/ · \d+\.\ds/);
  }, 60_000);

  it("on a terminal with llm.stream, shows the model's text as it arrives and the tokens so far", async () => {
    server = await serve([streamed(["The answer ", "is forty", " two."])]);
    const agent = writeAgent(root, { agentYaml: "name: test-agent\nllm:\n  model: mock-model\n  stream: true\n" }, "agent-tty-stream");
    const { exitCode, screen } = await onTerminal(["run", "--agent", agent, "-w", join(root, "ws-tty-stream"), "-m", "answer", "--format", "raw"], modelEnv(server.baseUrl));
    expect(exitCode, screen).toBe(0);
    expect(screen).toMatch(/\[1\] mock-model thinking · \d\.\ds · ~\d+ tokens · The answer is forty$/m);
  }, 60_000);

  it("is not drawn when stderr is a pipe, nor with TERM=dumb", async () => {
    server = await serve([fault.delay(600, reply.text("done")), fault.delay(600, reply.text("done"))]);
    const agent = writeAgent(root, {}, "agent-pipe");
    const piped = await delta(["run", "--agent", agent, "-w", join(root, "ws-pipe"), "-m", "x", "-v"], { env: modelEnv(server.baseUrl) });
    expect(piped.exitCode, piped.stderr).toBe(0);
    expect(piped.stderr).not.toMatch(/\x1b|thinking ·/);
    const dumb = await onTerminal(["run", "--agent", agent, "-w", join(root, "ws-pipe"), "-m", "x"], { ...modelEnv(server.baseUrl), TERM: "dumb" });
    expect(dumb.exitCode, dumb.screen).toBe(0);
    expect(dumb.screen).not.toContain("thinking ·");
  }, 60_000);
});

describe("--stream-deltas", () => {
  it("adds the streamed text to stream-json as TEXT_DELTA lines without seq, only when asked", async () => {
    server = await serve([streamed(["Hel", "lo ", "there"]), streamed(["Hel", "lo ", "there"])]);
    const agent = writeAgent(root, { agentYaml: "name: test-agent\nllm:\n  model: mock-model\n  stream: true\n" }, "agent-deltas");
    const ws = join(root, "ws-deltas");
    const asked = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "d1", "-m", "hi", "--format", "stream-json", "--stream-deltas"], { env: modelEnv(server.baseUrl) });
    expect(asked.exitCode, asked.stderr).toBe(0);
    const lines = asked.stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    const deltas = lines.filter((line) => line.type === "TEXT_DELTA");
    expect(deltas).toEqual([{ type: "TEXT_DELTA", iteration: 1, text: "Hel" }, { type: "TEXT_DELTA", iteration: 1, text: "lo " }, { type: "TEXT_DELTA", iteration: 1, text: "there" }]);
    // The journal's lines are exactly the journal; the deltas come before the THOUGHT they make up.
    expect(lines.filter((line) => "seq" in line)).toEqual(readEvents(ws, "d1"));
    expect(lines.findIndex((line) => line.type === "THOUGHT")).toBeGreaterThan(lines.findIndex((line) => line.type === "TEXT_DELTA"));

    const plain = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "d2", "-m", "hi", "--format", "stream-json"], { env: modelEnv(server.baseUrl) });
    expect(plain.stdout).not.toContain("TEXT_DELTA");

    const misplaced = await delta(["run", "--agent", agent, "-w", ws, "-m", "hi", "--stream-deltas"], { env: modelEnv(server.baseUrl) });
    expect(misplaced.exitCode).toBe(126);
    expect(misplaced.stderr).toContain("--stream-deltas adds lines to --format stream-json");
  });
});

describe("the summary's duration", () => {
  it("counts the start of the MCP servers, not only the run after them", async () => {
    server = await serve([reply.text("quick")]);
    // The filesystem server behind a 1.5 s pause: the model itself answers at once.
    const slowServer = ["/bin/sh", "-c", 'sleep 1.5; exec "$0" "$@"', ...filesystemServer("${CWD}")];
    const agent = writeAgent(root, { agentYaml: `name: test-agent\nllm:\n  model: mock-model\nmcp_servers:\n${stdioServerYaml("fs", slowServer, "    timeout_ms: 60000\n")}` }, "agent-duration");
    const result = await delta(["run", "--agent", agent, "-w", join(root, "ws-duration"), "-m", "x", "--format", "json"], { env: modelEnv(server.baseUrl), timeoutMs: 60_000 });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).metrics.duration_ms).toBeGreaterThanOrEqual(1500);
  }, 60_000);
});
