// examples/interactive-shell: against the scripted model, cd and export carry over between session_exec calls.
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { REPO, delta, modelEnv, readEvents, removeDir, tempDir } from "../e2e/harness.js";
import { reply, startMockLlm, type MockLlm, type RecordedRequest, type Step } from "../support/mock-llm.js";

const AGENT = join(REPO, "examples", "interactive-shell");

/** The session id the first tool result (session_start) returned, read back from the conversation. */
function sessionIdIn(request: RecordedRequest): string {
  const messages = (request.body as { messages: { role: string; content: string }[] }).messages;
  const started = messages.find((m) => m.role === "tool");
  return (JSON.parse(started?.content ?? "{}") as { session_id: string }).session_id;
}

function script(request: RecordedRequest, index: number): Step {
  if (index === 0) return reply.toolCalls([{ name: "session_start", arguments: {} }]);
  const session_id = sessionIdIn(request);
  switch (index) {
    case 1:
      return reply.toolCalls([{ name: "session_exec", arguments: { session_id, command: "mkdir -p demo && cd demo && export GREETING=hi" } }]);
    case 2:
      return reply.toolCalls([{ name: "session_exec", arguments: { session_id, command: 'pwd; echo "$GREETING"' } }]);
    case 3:
      return reply.toolCalls([{ name: "session_end", arguments: { session_id } }]);
    default:
      return reply.text("Created demo/ and checked that cd and export persisted.");
  }
}

let root: string;
let server: MockLlm;
let bin: string;
beforeAll(async () => {
  root = tempDir("delta-interactive-shell-");
  bin = join(root, "bin");
  mkdirSync(bin);
  // delta-sessions on PATH, as after `npm install -g` or `npm link`.
  writeFileSync(join(bin, "delta-sessions"), `#!/bin/sh\nexec "${process.execPath}" "${join(REPO, "bin", "delta-sessions.js")}" "$@"\n`);
  chmodSync(join(bin, "delta-sessions"), 0o755);
  server = await startMockLlm(script);
});
afterAll(async () => {
  await server.close();
  removeDir(root);
});

it("keeps the working directory and exported variables from one session_exec to the next", async () => {
  const ws = join(root, "ws");
  const env = modelEnv(server.baseUrl, { PATH: `${bin}${delimiter}${process.env.PATH ?? ""}` });
  const run = await delta(["run", "--agent", AGENT, "-w", ws, "--run-id", "shell", "--format", "json", "-m", "Make demo/ and check the session"], { env });
  expect(run.exitCode, run.stderr).toBe(0);

  const results = readEvents(ws, "shell").flatMap((e) => (e.type === "ACTION_RESULT" ? [e] : []));
  expect(results.map((e) => [e.tool_name, e.status])).toEqual([
    ["session_start", "SUCCESS"], ["session_exec", "SUCCESS"], ["session_exec", "SUCCESS"], ["session_end", "SUCCESS"],
  ]);
  expect(JSON.parse(results[0]!.observation_content)).toMatchObject({ session_id: expect.stringMatching(/^sess_[a-f0-9]{12}$/), status: "active" });
  const second = JSON.parse(results[2]!.observation_content) as { stdout: string; exit_code: number };
  expect(second).toMatchObject({ exit_code: 0, stdout: `${join(ws, "demo")}\nhi\n` });
  expect(JSON.parse(results[3]!.observation_content)).toMatchObject({ status: "terminated" });
});
