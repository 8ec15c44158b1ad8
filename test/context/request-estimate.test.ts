// Sizing a request near the model's window: the estimate and the provider's count of the previous request first, the tokenizer only where the limit is really near.
import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { JournalEvent } from "../../src/journal/events.js";
import { shownJournalOf } from "../support/journal-read.js";
import { inheritedEnv } from "../support/inherited-env.js";

// Counts every import of gpt-4o-mini's encoding: each test imports the context builder afresh.
const loads = vi.hoisted(() => ({ o200k: 0 }));
vi.mock("gpt-tokenizer/encoding/o200k_base", async (importOriginal) => {
  loads.o200k += 1;
  return importOriginal();
});

let root: string;

beforeEach(async () => {
  vi.resetModules();
  loads.o200k = 0;
  root = await realpath(await mkdtemp(join(tmpdir(), "delta-estimate-")));
  await writeFile(join(root, "system_prompt.md"), "You are careful.");
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const at = (seq: number, event: Record<string, unknown>): JournalEvent => ({ seq, timestamp: "2025-01-01T00:00:00.000Z", ...event }) as JournalEvent;
/** Prose of about five bytes a token in o200k_base: the three-bytes estimate overcounts it. */
const prose = (bytes: number): string => "word ".repeat(Math.ceil(bytes / 5)).slice(0, bytes);

/** The task, then one iteration per observation size; `usage` adds the provider's count to the last THOUGHT. */
function journal(observations: number[], last?: { estimated: number; reported: number }): JournalEvent[] {
  const events: JournalEvent[] = [at(1, { type: "USER_MESSAGE", content: "do the thing" })];
  observations.forEach((size, index) => {
    const n = index + 1;
    const counted = last && n === observations.length ? { usage: { input_tokens: last.reported, output_tokens: 5 }, estimated_input_tokens: last.estimated, estimated_by: "bytes" } : { usage: null };
    events.push(at(events.length + 1, { type: "THOUGHT", iteration: n, content: null, tool_calls: [{ id: `c${n}`, name: "read", arguments: "{}" }], model: "gpt-4o-mini", ...counted }));
    events.push(at(events.length + 1, { type: "ACTION_RESULT", iteration: n, action_id: `c${n}`, tool_name: "read", status: "SUCCESS", observation_content: `${n} ${prose(size)}`, exit_code: 0, duration_ms: 1 }));
  });
  return events;
}

/** gpt-4o-mini (an o200k_base model) in a 20,000-token window with 100 kept for the reply: 19,900 tokens of room. */
async function buildIn(events: JournalEvent[]) {
  const { buildContext } = await import("../../src/context/build.js");
  const { contextBudget } = await import("../../src/context/budget.js");
  const { ContextConfigSchema } = await import("../../src/context/schema.js");
  const config = ContextConfigSchema.parse({ sources: [{ type: "file", path: "${AGENT_HOME}/system_prompt.md" }, { type: "journal" }] });
  const budget = contextBudget({ model: "gpt-4o-mini", context_window: 20_000, max_tokens: 100 }, config);
  const runDir = join(root, ".delta", "run-1");
  return buildContext(config, { agentHome: root, cwd: root, runId: "run-1", runDir, journalPath: join(runDir, "journal.jsonl"), baseEnv: inheritedEnv, journal: shownJournalOf(events), budget });
}

describe("sizing a request without a tokenizer", () => {
  it("moves the window on the estimate when the bytes pass the window, loading no tokenizer", async () => {
    // 40 iterations of 1,200 bytes: 48 KB, past 19,900 by bytes and by the estimate.
    const built = await buildIn(journal(Array.from({ length: 40 }, () => 1_200)));
    expect(built.windowEvent).toMatchObject({ type: "CONTEXT_WINDOW", reason: "context_window", dropped_from: 1 });
    // Moved on an estimate: no counted tokens are journaled.
    expect(built.windowEvent).not.toHaveProperty("tokens_before");
    expect(built).toMatchObject({ estimatedBy: "bytes" });
    // Without a provider's count, the estimate is trusted up to half the room.
    expect(built.estimatedTokens!).toBeLessThanOrEqual(19_900 / 2);
    expect(loads.o200k).toBe(0);
  });

  it("predicts the request as the provider's count of the previous one plus the estimate of what was added", async () => {
    const observations = Array.from({ length: 40 }, () => 1_200);
    const alone = await buildIn(journal(observations));
    expect(alone.windowEvent).not.toBeNull();
    // The same journal whose last request (39 iterations, ≈ 16,000 estimated tokens) the provider counted at 12,000: one
    // iteration (≈ 410 estimated tokens) was added since.
    const built = await buildIn(journal(observations, { estimated: 16_000, reported: 12_000 }));
    // 12,000 + what was added is far below 90% of 19,900: the whole conversation goes, still with no tokenizer.
    expect(built.windowEvent).toBeNull();
    expect(built.messages).toHaveLength(2 + 40 * 2);
    expect(built.estimatedBy).toBe("bytes");
    expect(loads.o200k).toBe(0);
  });

  it("counts with the model's tokenizer where the estimate cannot tell: even the smallest window is near the limit", async () => {
    // The last observation alone: 36,000 bytes are 12,000 estimated tokens, more than the estimate may take (half of 19,900),
    // but about 7,200 o200k_base tokens: the exact count sends it whole.
    const built = await buildIn(journal([300, 36_000]));
    expect(loads.o200k).toBe(1);
    expect(built.estimatedBy).toBe("o200k_base");
    expect(built.windowEvent).toBeNull();
    expect(built.estimatedTokens!).toBeGreaterThan(7_000);
    expect(built.estimatedTokens!).toBeLessThan(8_000);
  });
});
