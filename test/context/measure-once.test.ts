// Each part of a request is measured once per build: a counting tokenizer sees every text it is given once, however many limits the build weighs.
import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { buildContext } from "../../src/context/build.js";
import { contextBudget } from "../../src/context/budget.js";
import { ContextConfigSchema } from "../../src/context/schema.js";
import type { FunctionTool } from "../../src/conversation.js";
import type { JournalEvent } from "../../src/journal/events.js";
import { shownJournalOf } from "../support/journal-read.js";
import { inheritedEnv } from "../support/inherited-env.js";

// Every text the model's tokenizer is asked to count.
const counted = vi.hoisted(() => [] as string[]);
vi.mock("gpt-tokenizer/encoding/o200k_base", async (importOriginal) => {
  const actual = await importOriginal<typeof import("gpt-tokenizer/encoding/o200k_base")>();
  return {
    ...actual,
    countTokens: (text: string, options: Parameters<typeof actual.countTokens>[1]) => {
      counted.push(text);
      return actual.countTokens(text, options);
    },
  };
});

let root: string;

beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "delta-measure-")));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const at = (seq: number, event: Record<string, unknown>): JournalEvent => ({ seq, timestamp: "2025-01-01T00:00:00.000Z", ...event }) as JournalEvent;

/** The task, then `count` iterations whose every text differs from the others'; the last observation `lastRepeats` times longer. */
function journal(count: number, lastRepeats = 1): JournalEvent[] {
  const events: JournalEvent[] = [at(1, { type: "USER_MESSAGE", content: "measure the run" })];
  for (let n = 1; n <= count; n += 1) {
    const repeats = n === count ? 30 * lastRepeats : 30;
    events.push(at(events.length + 1, { type: "THOUGHT", iteration: n, content: `step ${n}`, tool_calls: [{ id: `c${n}`, name: `read_${n}`, arguments: `{"page":${n}}` }], usage: null, model: "m" }));
    events.push(at(events.length + 1, { type: "ACTION_RESULT", iteration: n, action_id: `c${n}`, tool_name: `read_${n}`, status: "SUCCESS", observation_content: `page ${n}: ${"lorem ipsum ".repeat(repeats)}`, exit_code: 0, duration_ms: 1 }));
  }
  return events;
}

it("counts each source's message, the tools and each journal message once in a build that moves the window and fits it to the model's", async () => {
  // Short (under the text cache's 256 characters) and long: neither is counted twice.
  const prompt = "You count carefully.";
  const guide = `Guide: ${"keep notes short. ".repeat(30)}`;
  await writeFile(join(root, "prompt.md"), prompt);
  await writeFile(join(root, "guide.md"), guide);
  const config = ContextConfigSchema.parse({
    sources: [
      { type: "file", path: "${AGENT_HOME}/prompt.md" },
      { type: "file", id: "guide", path: "${AGENT_HOME}/guide.md" },
      { type: "journal", max_tokens: 1_500 },
    ],
  });
  const tools: FunctionTool[] = [{ type: "function", function: { name: "read_page", description: "Reads one page.", parameters: { type: "object", properties: { page: { type: "integer" } } } } }];
  const lines: string[] = [];
  const built = await buildContext(config, {
    agentHome: root,
    cwd: root,
    runId: "run-1",
    runDir: root,
    journalPath: join(root, "journal.jsonl"), baseEnv: inheritedEnv,
    // The last observation alone is nearer max_tokens than the estimate is trusted (half of it without a provider's count): only the tokenizer can tell.
    journal: shownJournalOf(journal(30, 7)),
    budget: contextBudget({ model: "gpt-4o", context_window: 4_000, max_tokens: 200 }, config),
    tools,
    log: (line) => lines.push(line),
  });

  // The build counted (a move on max_tokens, then the model's window) and logged its account.
  expect(built.windowEvent).toMatchObject({ type: "CONTEXT_WINDOW", reason: "max_tokens" });
  expect(built.estimatedBy).toBe("o200k_base");
  expect(lines.some((line) => line.startsWith("context: request "))).toBe(true);
  expect(counted).toEqual(expect.arrayContaining([prompt, `# Context Block: guide\n\n${guide}`, JSON.stringify(tools), "measure the run", "step 30"]));
  expect(counted.filter((text, index) => counted.indexOf(text) !== index)).toEqual([]);
});
