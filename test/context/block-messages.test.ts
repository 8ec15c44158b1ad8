// A source's block that reads as it did is the same message in the next iteration's build: what is keyed by a message (its request part, its size) is worked out once.
import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { buildContext } from "../../src/context/build.js";
import { ContextConfigSchema } from "../../src/context/schema.js";
import type { JournalEvent } from "../../src/journal/events.js";
import { shownJournalOf } from "../support/journal-read.js";
import { inheritedEnv } from "../support/inherited-env.js";

let root: string;
beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "delta-blocks-")));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const task: JournalEvent[] = [{ seq: 1, timestamp: "2025-01-01T00:00:00.000Z", type: "USER_MESSAGE", content: "go" } as JournalEvent];

it("gives the same message object for a file that did not change, and a new one with the new text when it did", async () => {
  await writeFile(join(root, "prompt.md"), "You are careful.");
  await writeFile(join(root, "notes.md"), "first notes");
  const config = ContextConfigSchema.parse({ sources: [{ type: "file", path: "${AGENT_HOME}/prompt.md" }, { type: "file", id: "notes", path: "${AGENT_HOME}/notes.md" }, { type: "journal" }] });
  const build = () => buildContext(config, { agentHome: root, cwd: root, runId: "r", runDir: root, journalPath: join(root, "journal.jsonl"), baseEnv: inheritedEnv, journal: shownJournalOf(task) });
  const first = await build();
  const second = await build();
  expect(second.messages[0]).toBe(first.messages[0]);
  expect(second.messages[1]).toBe(first.messages[1]);
  await writeFile(join(root, "notes.md"), "second notes");
  const third = await build();
  expect(third.messages[0]).toBe(first.messages[0]);
  expect(third.messages[1]).not.toBe(first.messages[1]);
  expect(third.messages[1]).toEqual({ role: "system", content: "# Context Block: notes\n\nsecond notes" });
});
