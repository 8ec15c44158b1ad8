// A source's block that reads as it did is the same message in the next iteration's build: what is keyed by a message (its request part, its size) is worked out once; a file source is read where its variables point each time.
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
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

it("reads a file source where its variables now point: the same config built for another workspace or agent reads that one's file", async () => {
  const agentA = join(root, "agent-a");
  const agentB = join(root, "agent-b");
  const workspaceA = join(root, "ws-a");
  const workspaceB = join(root, "ws-b");
  for (const [folder, text] of [
    [agentA, "prompt of a"],
    [agentB, "prompt of b"],
    [workspaceA, "notes of a"],
    [workspaceB, "notes of b"],
  ] as const) {
    await mkdir(folder);
    await writeFile(join(folder, folder.includes("agent") ? "prompt.md" : "DELTA.md"), text);
  }
  const config = ContextConfigSchema.parse({ sources: [{ type: "file", path: "${AGENT_HOME}/prompt.md" }, { type: "file", id: "notes", path: "${CWD}/DELTA.md" }, { type: "journal" }] });
  const build = (agentHome: string, cwd: string) => buildContext(config, { agentHome, cwd, runId: "r", runDir: root, journalPath: join(root, "journal.jsonl"), baseEnv: inheritedEnv, journal: shownJournalOf(task) });
  const contents = async (agentHome: string, cwd: string) => (await build(agentHome, cwd)).messages.slice(0, 2).map((message) => message.content);
  expect(await contents(agentA, workspaceA)).toEqual(["prompt of a", "# Context Block: notes\n\nnotes of a"]);
  expect(await contents(agentA, workspaceA)).toEqual(["prompt of a", "# Context Block: notes\n\nnotes of a"]);
  expect(await contents(agentB, workspaceA)).toEqual(["prompt of b", "# Context Block: notes\n\nnotes of a"]);
  expect(await contents(agentB, workspaceB)).toEqual(["prompt of b", "# Context Block: notes\n\nnotes of b"]);
  expect(await contents(agentA, workspaceA)).toEqual(["prompt of a", "# Context Block: notes\n\nnotes of a"]);
});
