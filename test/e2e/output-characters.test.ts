// A tool's output cut to a limit reaches the model in whole characters: a delta-sessions shell's large output, through a tool observation.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { binDir, pathWith } from "../examples/helpers.js";
import { reply, toolResultsOf, type MockLlm } from "../support/mock-llm.js";
import { actionResults, delta, modelEnv, writeAgent, setUpE2e } from "./harness.js";

// The shell's tool prints the few characters around delta-sessions' cut (the whole result would be cut again, to the observation's own limit).
const TOOLS = `tools:
  - name: session_start
    exec: "delta-sessions start"
  - name: session_exec
    shell: "delta-sessions exec \${session_id} | node excerpt.mjs"
    stdin: command
    parameters:
      - name: session_id
      - name: command
`;
const EXCERPT = `let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const out = JSON.parse(input).stdout;
  const at = out.indexOf("\\n[...");
  process.stdout.write(out.slice(at - 4, out.indexOf("]\\n", at) + 6));
});
`;

const { root, serve } = setUpE2e("delta-output-characters-");
let server: MockLlm;
beforeAll(async () => {
  server = await serve((request, index) => {
    if (index === 0) return reply.toolCalls([{ id: "call_start", name: "session_start", arguments: {} }]);
    if (index === 1) {
      const sessionId = (JSON.parse(toolResultsOf(request).at(-1)!) as { session_id: string }).session_id;
      return reply.toolCalls([{ id: "call_exec", name: "session_exec", arguments: { session_id: sessionId, command: "printf a; yes '€' | head -n 40000 | tr -d '\\n'" } }]);
    }
    return reply.text("done");
  });
});

it("a delta-sessions output of 3-byte characters cut at its 64 KiB limit reaches the observation with no broken character", { timeout: 90_000 }, async () => {
  const agent = writeAgent(root, { agentYaml: `name: shell\nllm:\n  model: mock-model\n${TOOLS}` });
  const ws = join(root, "ws");
  mkdirSync(ws);
  writeFileSync(join(ws, "excerpt.mjs"), EXCERPT);
  const run = await delta(["run", "--agent", agent, "-w", ws, "-y", "--run-id", "wide", "-m", "print many euros", "--format", "json"], {
    env: modelEnv(server.baseUrl, { PATH: pathWith(binDir(root)) }),
    timeoutMs: 80_000,
  });
  expect(run.exitCode, run.stderr).toBe(0);
  // 120,001 bytes, 32 KiB kept of each end: the head gives up the 1 byte of a character it would cut, the tail 2.
  expect(actionResults(ws, "wide")[1]!.observation_content).toBe("€€€€\n[... 54468 bytes truncated ...]\n€€€€");
});
