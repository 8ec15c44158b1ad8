// The report's parts on their own: usage fields present or not, timeline bars with and without io records, escaping.
import { describe, expect, it } from "vitest";
import { deriveRunState } from "../support/journal-read.js";
import type { JournalEvent, NewEvent } from "../../src/journal/events.js";
import { escapeHtml, html } from "../../src/report/html-escape.js";
import { createEventFormatter } from "../../src/report/show-text.js";
import { textStyle } from "../../src/report/text-style.js";
import { describeWindowMove } from "../../src/journal/window-move.js";
import { accountOf, loadRunAccount } from "../../src/report/run-account.js";
import { modelCallsFor } from "../../src/report/model-calls.js";
import { resolve } from "node:path";
import { timelineOf } from "../../src/report/timeline.js";
import { formatUsage, usageNumbers } from "../../src/report/usage-fields.js";
import { runPaths } from "../../src/store/run-dir.js";

import { priceRunUsage } from "../../src/llm/usage.js";
import { parseRunId } from "../../src/store/run-id.js";

const at = (ms: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, 0, ms)).toISOString();

/** A small journal: start, task, two iterations (a tool call, then the answer), end; one event per 100 ms. */
function journal(): JournalEvent[] {
  const events: NewEvent[] = [
    { type: "ENGINE_START", run_id: "r", agent_home: "/a", work_dir: "/w", config: { agent_name: "demo", model: "m" }, engine_version: "0.1.0" },
    { type: "USER_MESSAGE", content: "task" },
    { type: "THOUGHT", iteration: 1, content: null, tool_calls: [{ id: "c1", name: "echo", arguments: "{}" }], usage: { input_tokens: 10, output_tokens: 2 }, model: "m" },
    { type: "ACTION_REQUEST", iteration: 1, action_id: "c1", tool_name: "echo", tool_args: {}, resolved_command: ["echo"] },
    { type: "ACTION_RESULT", iteration: 1, action_id: "c1", tool_name: "echo", status: "SUCCESS", observation_content: "\n", exit_code: 0, duration_ms: 40 },
    { type: "THOUGHT", iteration: 2, content: "done", tool_calls: [], usage: { input_tokens: 20, output_tokens: 3 }, model: "m" },
    { type: "ENGINE_END", run_id: "r", status: "COMPLETED", final_iteration: 2 },
  ];
  return events.map((event, index) => ({ ...event, seq: index + 1, timestamp: at(index * 100) }) as JournalEvent);
}

describe("usage fields", () => {
  it("shows what the journal holds, in table order, and cached, reasoning and cost when present", () => {
    expect(formatUsage(usageNumbers({ input_tokens: 1200, output_tokens: 34 }))).toBe("1,200 in · 34 out");
    const richer = { input_tokens: 1000, output_tokens: 50, cached_input_tokens: 200, reasoning_tokens: 10, cost_usd: 0.0012 };
    expect(formatUsage(usageNumbers(richer as unknown as Parameters<typeof usageNumbers>[0]))).toBe("1,000 in · 200 cached · 50 out · 10 reasoning · $0.0012 cost");
    expect(formatUsage(usageNumbers(null))).toBeNull();
  });

  it("sums each iteration's usage into the run's", () => {
    const account = accountOf("/w", "r", runPaths("/w", parseRunId("r")), journal(), null);
    expect(account.usage).toEqual({ input_tokens: 30, output_tokens: 5 });
    expect(account.iterations.map((iteration) => iteration.actions.length)).toEqual([1, 0]);
  });

  it("totals a run as its RunResult does: a server's impossible cached count is clamped in the total, not summed raw", () => {
    const events = journal().map((event) =>
      event.type === "THOUGHT" && event.iteration === 2 ? { ...event, usage: { input_tokens: 20, output_tokens: 3, cached_input_tokens: 500 } } : event,
    );
    const account = accountOf("/w", "r", runPaths("/w", parseRunId("r")), events, null);
    const result = priceRunUsage(deriveRunState(events).usage, undefined);
    expect(account.usage).toEqual({ input_tokens: 30, cached_input_tokens: 20, output_tokens: 5 });
    expect(account.usage.cached_input_tokens).toBe(result.cached_input_tokens);
    // The call itself is shown as the server reported it.
    expect(account.iterations[1]!.usage.cached_input_tokens).toBe(500);
  });
});

describe("timeline", () => {
  it("takes model calls from io records, and times a THOUGHT without one from the event before it", () => {
    const account = accountOf("/w", "r", runPaths("/w", parseRunId("r")), journal(), null);
    const recorded = [{ iteration: 1, start: Date.parse(at(150)), durationMs: 30, file: "x.json" }];
    const spans = timelineOf(account, recorded);
    expect(spans.map((span) => [span.kind, span.iteration, span.start - Date.parse(at(0)), span.durationMs, span.seq])).toEqual([
      ["model", 1, 150, 30, 3],
      ["tool", 1, 300, 40, 5],
      // No record for iteration 2: from the ACTION_RESULT (400 ms) to its THOUGHT (500 ms).
      ["model", 2, 400, 100, 6],
    ]);
  });

  it("draws a tool with no result as unfinished, up to the last event", () => {
    const events = journal().slice(0, 4);
    const spans = timelineOf(accountOf("/w", "r", runPaths("/w", parseRunId("r")), events, null), []);
    expect(spans.find((span) => span.kind === "tool")).toMatchObject({ outcome: "unfinished", durationMs: 0, seq: 4 });
  });
});

describe("model call records", () => {
  const oldRun = resolve("test/fixtures/runs/old-format-run/work");
  const paths = runPaths(oldRun, parseRunId("old-format-run"));

  it("are read for a journal whose THOUGHTs carry no timing of their own (written before they did)", () => {
    const account = loadRunAccount(oldRun, "old-format-run", paths, () => {});
    expect(account.iterations.every(({ thought }) => thought.started_at === undefined)).toBe(true);
    expect(modelCallsFor(account, () => {}).map((call) => call.iteration)).toEqual([1, 2]);
  });

  it("are not read when every THOUGHT carries its call's start and duration", () => {
    const account = loadRunAccount(oldRun, "old-format-run", paths, () => {});
    const timed = { ...account, iterations: account.iterations.map((iteration) => ({ ...iteration, thought: { ...iteration.thought, started_at: at(0), duration_ms: 5 } })) };
    expect(modelCallsFor(timed, () => {})).toEqual([]);
  });
});

describe("escaping", () => {
  it("escapes every interpolation, and only our own Html passes through", () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe("&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
    const inner = html`<b>${"</script>"}</b>`;
    expect(html`<p title="${'"><script>'}">${inner}${["<i>", 1]}</p>`.text).toBe('<p title="&quot;&gt;&lt;script&gt;"><b>&lt;/script&gt;</b>&lt;i&gt;1</p>');
  });
});

describe("window moves", () => {
  const move = (extra: Partial<NewEvent & { type: "CONTEXT_WINDOW" }>) =>
    ({ seq: 9, timestamp: at(0), type: "CONTEXT_WINDOW", iteration: 22, reason: "max_iterations", first_iteration: 12, dropped_from: 1, dropped_to: 11, limit: 20, ...extra }) as JournalEvent & { type: "CONTEXT_WINDOW" };

  it("say what was dropped, why, and where the context starts now", () => {
    expect(describeWindowMove(move({}))).toBe("iterations 1–11 dropped (more than max_iterations 20); the context shows iteration 12 on");
    expect(describeWindowMove(move({ reason: "overflow", dropped_to: 1, first_iteration: 2, tokens_before: 9_000, tokens_after: 4_000, overflow: { window_tokens: 8_100, sent_estimate: 9_000 } }))).toBe(
      "iteration 1 dropped (the server refused the request as too long, 9000 → 4000 tokens); the context shows iteration 2 on; requests now keep within 8100 tokens",
    );
  });

  it("are a line of delta show", () => {
    const lines = createEventFormatter(textStyle(false))(move({ reason: "max_tokens", limit: 12_000 }));
    expect(lines.join("\n")).toContain("window iterations 1–11 dropped (more than max_tokens 12000); the context shows iteration 12 on");
  });
});
