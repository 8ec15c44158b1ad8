// End to end under a real pty (script(1)): escape sequences from a tool, the model and an ask_human prompt reach the terminal as visible text, never as sequences.
import { execa } from "execa";
import { join } from "node:path";
import shellQuote from "shell-quote";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reply, startMockLlm } from "../support/mock-llm.js";
import { DELTA_BIN, NO_MODEL_KEYS, modelEnv, removeDir, tempDir, writeAgent } from "./harness.js";

/** OSC 52: write "pwned" to the clipboard; then a title change and a screen clear. */
const OSC52 = "\u001b]52;c;cHduZWQ=\u0007";
const ATTACK = `${OSC52}\u001b]0;owned\u0007\u001b[2J\u009b31m\u202eevil`;

let root: string;
beforeAll(() => {
  root = tempDir("delta-pty-");
});
afterAll(() => removeDir(root));

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
});
