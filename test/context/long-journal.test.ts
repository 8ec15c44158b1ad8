// A journal of 50,000 events is read, folded and turned into the model's context: nothing on that path recurses per event.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { deriveRunState, readJournal, shownJournalOf } from "../support/journal-read.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { buildContext } from "../../src/context/build.js";
import { ContextConfigSchema } from "../../src/context/schema.js";
import { inheritedEnv } from "../support/inherited-env.js";

// More than three times what a recursion per event needs to overflow V8's default stack (about 14,000 frames of the smallest function).
const EVENTS = 50_000;
let dir: string;
let path: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "delta-long-journal-"));
  path = join(dir, "journal.jsonl");
  const at = "2026-01-01T00:00:00.000Z";
  const lines = [
    JSON.stringify({ seq: 1, timestamp: at, type: "ENGINE_START", run_id: "r", agent_home: dir, work_dir: dir, config: {}, engine_version: "0" }),
    JSON.stringify({ seq: 2, timestamp: at, type: "USER_MESSAGE", content: "task" }),
  ];
  for (let iteration = 1; lines.length < EVENTS; iteration += 1) {
    const id = `c${iteration}`;
    lines.push(JSON.stringify({ seq: lines.length + 1, timestamp: at, type: "THOUGHT", iteration, content: null, tool_calls: [{ id, name: "echo", arguments: "{}" }], usage: null, model: "m" }));
    lines.push(JSON.stringify({ seq: lines.length + 1, timestamp: at, type: "ACTION_RESULT", iteration, action_id: id, tool_name: "echo", status: "SUCCESS", observation_content: "x", exit_code: 0, duration_ms: 1 }));
  }
  writeFileSync(path, `${lines.join("\n")}\n`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it(`reads, folds and builds the whole conversation of a ${EVENTS}-event journal`, async () => {
  const events = readJournal(path);
  expect(events).toHaveLength(EVENTS);
  expect(deriveRunState(events)).toMatchObject({ status: "RUNNING", iterations: (EVENTS - 2) / 2, pending: [] });
  const env = { agentHome: dir, cwd: dir, runId: "r", runDir: dir, journalPath: path, baseEnv: inheritedEnv, journal: shownJournalOf(events) };
  const { messages } = await buildContext(ContextConfigSchema.parse({ sources: [{ type: "journal" }] }), env);
  // The task, then per iteration the assistant's call and its tool result.
  expect(messages).toHaveLength(1 + (EVENTS - 2));
  // Windowed, the same journal is cut into blocks and measured without a pass that recurses either.
  const windowed = await buildContext(ContextConfigSchema.parse({ sources: [{ type: "journal", max_iterations: 20 }] }), env);
  expect(windowed.windowEvent).toMatchObject({ type: "CONTEXT_WINDOW", reason: "max_iterations", first_iteration: (EVENTS - 2) / 2 - 9 });
  expect(windowed.messages).toHaveLength(1 + 10 * 2);
}, 60_000);
