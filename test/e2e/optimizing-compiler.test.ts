// A run's loop holds V8's optimizing compiler off (cli/runtime-flags.ts), and leaves it alone when the user's Node flags choose it.
import { execa } from "execa";
import { join } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { copyOfDelta, modelEnv, setUpE2e, writeAgent } from "./harness.js";
import { messagesOf, reply, type MockLlm } from "../support/mock-llm.js";

const ITERATIONS = 150;

const { root, serve } = setUpE2e("delta-optimizing-compiler-");
let server: MockLlm;
let bin: string;

beforeAll(async () => {
  server = await serve((request) => {
    const done = messagesOf(request).filter((message) => message.role === "tool").length;
    return done >= ITERATIONS ? reply.text("done") : reply.toolCalls([{ id: `call_${done}`, name: "echo", arguments: { text: String(done) } }]);
  });
  // Its own copy: a process started with V8 flags makes a code cache no other test's run could use.
  bin = copyOfDelta(join(root, "install"));
}, 60_000);

/** A run of ITERATIONS tool calls under `node <nodeFlags> bin/delta.js`; returns the functions V8 compiled with TurboFan (its --trace-opt lines). */
async function optimizedIn(runId: string, nodeFlags: string[]): Promise<number> {
  const agent = writeAgent(join(root, runId), { agentYaml: ["name: hot-loop", "llm:", "  model: gpt-4o-mini", "tools:", "  - name: echo", '    exec: "echo ${text}"'].join("\n") });
  const result = await execa(process.execPath, ["--trace-opt", ...nodeFlags, bin, "run", "--agent", agent, "-w", join(root, "ws"), "--run-id", runId, "--format", "json", "--max-iterations", String(ITERATIONS + 5), "-m", runId], {
    env: modelEnv(server.baseUrl),
    reject: false,
    timeout: 120_000,
  });
  expect(result.exitCode, String(result.stderr).slice(-3_000)).toBe(0);
  return String(result.stdout)
    .split("\n")
    .filter((line) => line.startsWith("[completed optimizing") && line.includes("(target TURBOFAN)")).length;
}

it(`compiles a handful of functions with TurboFan in a ${ITERATIONS}-iteration run, and many when the user's --turbofan keeps the compiler on`, async () => {
  const held = await optimizedIn("held", []);
  const chosen = await optimizedIn("chosen", ["--turbofan"]);
  // Measured: 3 against 80. Start-up and the run's end keep the compiler; every turn in between runs baseline code.
  expect(chosen).toBeGreaterThanOrEqual(20);
  expect(held * 4).toBeLessThan(chosen);
}, 300_000);
