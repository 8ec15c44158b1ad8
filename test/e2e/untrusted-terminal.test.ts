// End to end under a real pty (script(1)): escape sequences from a tool, the model, an ask_human prompt, an MCP tool's description and an owner record's host name reach the terminal as visible text, never as sequences.
import { execa } from "execa";
import { readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import shellQuote from "shell-quote";
import { describe, expect, it } from "vitest";
import { reply, startMockLlm } from "../support/mock-llm.js";
import { stdioServerYaml } from "../support/mcp-servers.js";
import { DELTA_BIN, NO_MODEL_KEYS, journalHas, modelEnv, runDir, spawnDelta, waitFor, writeAgent, setUpE2e } from "./harness.js";

/** OSC 52: write "pwned" to the clipboard; then a title change and a screen clear. */
const OSC52 = "\u001b]52;c;cHduZWQ=\u0007";
const ATTACK = `${OSC52}\u001b]0;owned\u0007\u001b[2J\u009b31m\u202eevil`;

const { root } = setUpE2e("delta-pty-");

/** Runs delta on a pseudo-terminal, as a person would see it: everything it printed, stdout and stderr together. */
async function onTerminal(args: string[], env: Record<string, string>, input = ""): Promise<{ exitCode: number; screen: string }> {
  const command = shellQuote.quote([process.execPath, DELTA_BIN, ...args]);
  const result = await execa("script", ["-qec", command, "/dev/null"], { env: { ...NO_MODEL_KEYS, ...env }, input, reject: false, timeout: 30_000 });
  return { exitCode: result.exitCode ?? -1, screen: String(result.stdout) };
}

function expectNoSequences(screen: string): void {
  expect(screen).not.toContain("\u001b]");
  expect(screen).not.toContain("\u001b[2J");
  expect(screen).not.toContain("\u009b");
  expect(screen).not.toContain("\u202e");
  // What was sent is still there to read, as text.
  expect(screen).toContain("\\x1b]52;c;cHduZWQ=");
}

describe("a terminal", () => {
  it("shows a tool's output and the model's answer with their escape sequences neutralised, in text and raw", async () => {
    const server = await startMockLlm(() => reply.text(`answer ${ATTACK}`));
    const toolServer = await startMockLlm([reply.toolCalls([{ name: "emit", arguments: {} }]), reply.text(`done ${ATTACK}`)]);
    try {
      const agent = writeAgent(root, { tools: `tools:\n  - name: emit\n    shell: "printf '${ATTACK.replace(/\u001b/g, "\\\\033").replace(/\u0007/g, "\\\\007").replace(/\u009b/g, "\\\\302\\\\233").replace(/\u202e/g, "\\\\342\\\\200\\\\256")}'"\n` }, "agent-tty");
      const run = await onTerminal(["run", "--agent", agent, "-w", join(root, "ws"), "--run-id", "t1", "-m", "go"], modelEnv(toolServer.baseUrl));
      expect(run.exitCode, run.screen).toBe(0);
      expectNoSequences(run.screen);
      const raw = await onTerminal(["run", "--agent", agent, "-w", join(root, "ws"), "--run-id", "t2", "-m", "go", "--format", "raw"], modelEnv(server.baseUrl));
      expect(raw.exitCode, raw.screen).toBe(0);
      expectNoSequences(raw.screen);
      const listed = await onTerminal(["list-runs", "-w", join(root, "ws")], {});
      expect(listed.screen).not.toContain("\u001b]");
    } finally {
      await server.close();
      await toolServer.close();
    }
  }, 90_000);

  it("shows an ask_human prompt neutralised, paused (async) and asked on the terminal (-i)", async () => {
    const ask = () => reply.toolCalls([{ name: "ask_human", arguments: { prompt: `Your password? ${ATTACK}` } }]);
    const server = await startMockLlm([ask(), ask(), reply.text("thanks")]);
    try {
      const agent = writeAgent(root, {}, "agent-ask");
      const paused = await onTerminal(["run", "--agent", agent, "-w", join(root, "ws-ask"), "--run-id", "a1", "-m", "go"], modelEnv(server.baseUrl));
      expect(paused.exitCode, paused.screen).toBe(101);
      expectNoSequences(paused.screen);
      const asked = await onTerminal(["run", "--agent", agent, "-w", join(root, "ws-ask"), "--run-id", "a2", "-m", "go", "-i"], modelEnv(server.baseUrl), "hunter2\n");
      expectNoSequences(asked.screen);
    } finally {
      await server.close();
    }
  }, 90_000);

  it("shows an MCP tool's description neutralised in tool list", async () => {
    // A stdio MCP server whose one tool's description carries the sequences.
    const server = join(root, "evil-server.cjs");
    writeFileSync(
      server,
      `const description = ${JSON.stringify(`Reads a file ${ATTACK}`)};
require("node:readline").createInterface({ input: process.stdin }).on("line", (line) => {
  const message = JSON.parse(line);
  if (message.id === undefined) return;
  const result = message.method === "initialize"
    ? { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "evil", version: "1.0.0" } }
    : message.method === "tools/list" ? { tools: [{ name: "read", description, inputSchema: { type: "object", properties: {} } }] } : {};
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }) + "\\n");
});
`,
    );
    const agent = writeAgent(root, { tools: `mcp_servers:\n${stdioServerYaml("evil", [process.execPath, server], "    sandbox: {mode: off}\n")}` }, "agent-mcp");
    const listed = await onTerminal(["tool", "list", agent], {});
    expect(listed.exitCode, listed.screen).toBe(0);
    expect(listed.screen).toContain("evil__read");
    expectNoSequences(listed.screen);
  }, 60_000);

  it("shows a host name from an owner record neutralised in show, list-runs and continue's refusal", async () => {
    const server = await startMockLlm([reply.toolCalls([{ name: "slow", arguments: {} }]), reply.text("done")]);
    const ws = join(root, "ws-host");
    try {
      const agent = writeAgent(root, { tools: 'tools:\n  - name: slow\n    shell: "sleep 30"\n' }, "agent-host");
      const child = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "h1", "-m", "go"], { env: modelEnv(server.baseUrl) });
      await waitFor(() => journalHas(ws, "h1", "ACTION_REQUEST"), 15_000, "the run reaching its tool");
      child.kill("SIGKILL");
      await child;
      // The record now says an engine on another machine, named with the sequences, holds the run, and its heartbeat moves.
      const lock = join(runDir(ws, "h1"), ".lock");
      const file = join(lock, readdirSync(lock).filter((name) => /^\d+\.json$/.test(name)).sort((a, b) => parseInt(b) - parseInt(a))[0]!);
      const record = { ...JSON.parse(readFileSync(file, "utf8")), hostname: `node-7${ATTACK}`, machine_id: "0123456789abcdef0123456789abcdef", boot_id: "00000000-1111-2222-3333-444444444444", heartbeat_ms: 300 };
      let beat = 0;
      const bump = (): void => {
        beat += 1;
        writeFileSync(`${file}.tmp`, JSON.stringify({ ...record, heartbeat: beat }));
        renameSync(`${file}.tmp`, file);
      };
      bump();
      const beating = setInterval(bump, 50);
      try {
        const shown = await onTerminal(["show", "h1", "-w", ws], {});
        expect(shown.screen).toContain("node-7");
        expectNoSequences(shown.screen);
        const listed = await onTerminal(["list-runs", "-w", ws], {});
        expect(listed.screen).toContain("node-7");
        expectNoSequences(listed.screen);
        const refused = await onTerminal(["continue", "--run-id", "h1", "-w", ws, "-m", "more", "--accept-endpoint"], modelEnv(server.baseUrl));
        expect(refused.exitCode, refused.screen).toBe(126);
        expect(refused.screen).toContain("node-7");
        expectNoSequences(refused.screen);
      } finally {
        clearInterval(beating);
      }
    } finally {
      await server.close();
    }
  }, 90_000);
});
