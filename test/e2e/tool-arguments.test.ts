// Tool-call arguments nested too deep, through the binary: an ERROR observation, and the run stays resumable, every continue reading the THOUGHT that holds them (each limit's observation: test/loop/tool-calls.test.ts).
import { join } from "node:path";
import { readJournal } from "../support/journal-read.js";
import { beforeAll, describe, expect, it } from "vitest";

import { MAX_ARGUMENT_DEPTH } from "../../src/tools/argument-limits.js";
import { reply, startMockLlm, toolResultsOf } from "../support/mock-llm.js";
import { actionResults, CRASH_TRACE, delta, modelEnv, runDir, writeAgent, setUpE2e } from "./harness.js";

const { root } = setUpE2e("delta-arguments-");
let agent: string;
beforeAll(() => {
  agent = writeAgent(root);
});

const CASES = [
  // 20,000 nested arrays (40 KB): walking them recursively overflows the stack.
  { name: "nested-arrays", arguments: `{"text": ${"[".repeat(20_000)}${"]".repeat(20_000)}}`, observation: `nested 20001 levels deep; at most ${MAX_ARGUMENT_DEPTH}` },
  // About 20 KB of objects 4,100 deep, as the model that bricked a run sent them.
  { name: "nested-objects", arguments: `{"text": ${'{"a":'.repeat(4_100)}1${"}".repeat(4_100)}}`, observation: `nested 4101 levels deep; at most ${MAX_ARGUMENT_DEPTH}` },
];

describe("tool-call arguments over the limits", () => {
  for (const { name, arguments: args, observation } of CASES) {
    it(`${name}: become an ERROR observation, and the run continues and can be continued again`, async () => {
      const server = await startMockLlm((request) => (toolResultsOf(request).length > 0 ? reply.text(`saw ${toolResultsOf(request).length} result`) : reply.toolCalls([{ name: "echo", arguments: args }])));
      const ws = join(root, name);
      try {
        const first = await delta(["run", "--agent", agent, "-w", ws, "--run-id", name, "-m", "go", "--format", "json"], { env: modelEnv(server.baseUrl) });
        expect(first.stderr).not.toMatch(CRASH_TRACE);
        expect(first.exitCode).toBe(0);
        const [result] = actionResults(ws, name);
        expect(result).toMatchObject({ status: "ERROR", observation_content: expect.stringContaining(observation) });
        // Every resume reads the journal (and the THOUGHT holding those arguments) again.
        const again = await delta(["continue", "--run-id", name, "-w", ws, "-m", "once more", "--format", "json"], { env: modelEnv(server.baseUrl) });
        expect(again.exitCode).toBe(0);
        const events = readJournal(join(runDir(ws, name), "journal.jsonl"));
        expect(events.find((event) => event.type === "THOUGHT")).toMatchObject({ tool_calls: [{ arguments: args }] });
        expect(events.find((event) => event.type === "ACTION_REQUEST")).toMatchObject({ tool_args: null, resolved_command: null });
      } finally {
        await server.close();
      }
    });
  }
});
