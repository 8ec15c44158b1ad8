// End to end: many engine processes at once share nothing but the file system.
import { readdirSync } from "node:fs";
import { readJournal } from "../support/journal-read.js";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

import { reply, type MockLlm } from "../support/mock-llm.js";
import { delta, modelEnv, writeAgent, setUpE2e } from "./harness.js";

const { root, serve } = setUpE2e();
let server: MockLlm;

beforeAll(async () => {
  server = await serve((request) => {
    const messages = (request.body as { messages: Array<{ role: string }> }).messages;
    return messages.some((message) => message.role === "tool")
      ? reply.text("finished")
      : reply.toolCalls([{ name: "echo", arguments: { text: "work" } }]);
  });
});

describe("concurrent runs", () => {
  it("completes 20 runs started at once in one workspace with distinct run ids and valid journals", async () => {
    const agent = writeAgent(root, {}, "agent-fan");
    const ws = join(root, "shared-ws");
    const ids = Array.from({ length: 20 }, (_, i) => `fan-${String(i).padStart(2, "0")}`);
    const results = await Promise.all(
      ids.map((id) => delta(["run", "--agent", agent, "-w", ws, "--run-id", id, "-m", `item ${id}`, "--format", "json"], { env: modelEnv(server.baseUrl), timeoutMs: 60_000 })),
    );
    expect(results.map((result) => result.exitCode)).toEqual(ids.map(() => 0));
    expect(results.map((result) => JSON.parse(result.stdout).run_id).sort()).toEqual(ids);
    for (const id of ids) {
      const events = readJournal(join(ws, ".delta", id, "journal.jsonl"));
      expect(events.at(-1)).toMatchObject({ type: "ENGINE_END", status: "COMPLETED" });
      const user = events.find((event) => event.type === "USER_MESSAGE");
      expect(user).toMatchObject({ content: `item ${id}` });
    }
  }, 90_000);

  it("gives 8 concurrent `run -y` 8 distinct new workspaces", async () => {
    const agent = writeAgent(root, {}, "agent-ws");
    const results = await Promise.all(
      Array.from({ length: 8 }, () => delta(["run", "--agent", agent, "-y", "-m", "go", "--format", "json"], { env: modelEnv(server.baseUrl), timeoutMs: 60_000 })),
    );
    expect(results.map((result) => result.exitCode)).toEqual(Array(8).fill(0));
    const paths = results.map((result) => JSON.parse(result.stdout).metadata.workspace_path as string);
    expect(new Set(paths).size).toBe(8);
    expect(readdirSync(join(agent, "workspaces")).filter((name) => /^W\d{3}$/.test(name))).toHaveLength(8);
  }, 90_000);
});
