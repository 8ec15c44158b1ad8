import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildContext as build, type ContextEnv } from "../../src/context/build.js";
import { ContextConfigSchema } from "../../src/context/schema.js";
import { ConfigError, ContextOverflowError, EngineError } from "../../src/errors.js";
import { contextBudget } from "../../src/context/budget.js";
import type { JournalEvent } from "../../src/journal/events.js";
import { shownJournalOf } from "../support/journal-read.js";
import { inheritedEnv } from "../support/inherited-env.js";

let root: string;
let agentHome: string;
let cwd: string;

beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "delta-context-")));
  agentHome = join(root, "agent");
  cwd = join(root, "W001");
  await mkdir(agentHome);
  await mkdir(join(cwd, ".delta", "run-1"), { recursive: true });
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function env({ events = [], ...overrides }: Partial<Omit<ContextEnv, "journal">> & { events?: JournalEvent[] } = {}): ContextEnv {
  const runDir = join(cwd, ".delta", "run-1");
  return { agentHome, cwd, runId: "run-1", runDir, journalPath: join(runDir, "journal.jsonl"), baseEnv: inheritedEnv, journal: shownJournalOf(events), ...overrides };
}

/** The messages a build makes. */
async function buildContext(...args: Parameters<typeof build>) {
  return (await build(...args)).messages;
}

/** Parses like the agent loader does, so schema defaults (on_missing, timeout_ms) apply. */
function config(sources: unknown[]) {
  return ContextConfigSchema.parse({ sources });
}

const defaultTemplate = config([
  { type: "file", id: "system_prompt", path: "${AGENT_HOME}/system_prompt.md" },
  { type: "file", id: "workspace_guide", path: "${CWD}/DELTA.md", on_missing: "skip" },
  { type: "journal", id: "conversation_history" },
]);

const task: JournalEvent = { seq: 1, timestamp: "2025-01-01T00:00:00.000Z", type: "USER_MESSAGE", content: "do the thing" };

describe("buildContext", () => {
  it("sends the system prompt verbatim, then the workspace guide as a labelled block, then the conversation", async () => {
    await writeFile(join(agentHome, "system_prompt.md"), "You are careful.");
    await writeFile(join(cwd, "DELTA.md"), "Run tests with make.");
    const messages = await buildContext(defaultTemplate, env({ events: [task] }));
    expect(messages).toEqual([
      { role: "system", content: "You are careful." },
      { role: "system", content: "# Context Block: workspace_guide\n\nRun tests with make." },
      { role: "user", content: "do the thing" },
    ]);
  });

  it("leaves out a DELTA.md that does not exist when on_missing is skip", async () => {
    await writeFile(join(agentHome, "system_prompt.md"), "You are careful.");
    const messages = await buildContext(defaultTemplate, env({ events: [task] }));
    expect(messages.map((message) => message.role)).toEqual(["system", "user"]);
  });

  it("reads the files again on every build so edits between iterations are seen", async () => {
    await writeFile(join(agentHome, "system_prompt.md"), "first");
    expect((await buildContext(defaultTemplate, env()))[0]?.content).toBe("first");
    await writeFile(join(agentHome, "system_prompt.md"), "second");
    expect((await buildContext(defaultTemplate, env()))[0]?.content).toBe("second");
  });

  it("expands AGENT_HOME and CWD, leaves other variables as written, and labels unnamed blocks by file name", async () => {
    await writeFile(join(agentHome, "a.md"), "from agent");
    await mkdir(join(cwd, "${HOME}"));
    await writeFile(join(cwd, "${HOME}", "b.md"), "literal dir");
    const messages = await buildContext(
      config([{ type: "file", path: "${AGENT_HOME}/a.md" }, { type: "file", path: "${CWD}/${HOME}/b.md" }]),
      env(),
    );
    expect(messages).toEqual([
      { role: "system", content: "from agent" },
      { role: "system", content: "# Context Block: b.md\n\nliteral dir" },
    ]);
  });

  it("reads a relative path from the agent's home", async () => {
    await writeFile(join(agentHome, "prompt.md"), "relative");
    expect(await buildContext(config([{ type: "file", path: "prompt.md" }]), env())).toEqual([{ role: "system", content: "relative" }]);
  });

  it("adds nothing for an empty file", async () => {
    await writeFile(join(agentHome, "empty.md"), "");
    expect(await buildContext(config([{ type: "file", path: "${AGENT_HOME}/empty.md" }]), env())).toEqual([]);
  });

  it("refuses a missing required file with a message naming the source, the path and the fix", async () => {
    const error = await buildContext(defaultTemplate, env()).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toContain("'system_prompt' (sources[0])");
    expect(message).toContain(join(agentHome, "system_prompt.md"));
    expect(message).toContain("sources[0].path");
    expect(message).toContain("set on_missing: skip to make it optional");
  });

  it("runs a generator in the workspace with the run's variables and includes what it wrote", async () => {
    const script = join(agentHome, "gen.sh");
    await writeFile(
      script,
      'mkdir -p out && printf "%s|%s|%s|%s|%s|%s" "$PWD" "$DELTA_RUN_ID" "$DELTA_AGENT_HOME" "$DELTA_CWD" "$JOURNAL_PATH" "$RUN_DIR" > out/summary.md\n',
    );
    const messages = await buildContext(
      config([{
        type: "computed_file",
        id: "summary",
        generator: { command: ["sh", "${AGENT_HOME}/gen.sh"] },
        output_path: "${CWD}/out/summary.md",
      }]),
      env(),
    );
    const runDir = join(cwd, ".delta", "run-1");
    expect(messages).toEqual([{
      role: "system",
      content: `# Context Block: summary\n\n${[cwd, "run-1", agentHome, cwd, join(runDir, "journal.jsonl"), runDir].join("|")}`,
    }]);
  });

  it("reports a failing generator with its exit code and the end of its stderr", async () => {
    const source = { type: "computed_file", id: "summary", generator: { command: ["sh", "-c", "echo noise >&2; echo 'index missing' >&2; exit 3"] }, output_path: "out.md" };
    const error = await buildContext(config([source]), env()).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(EngineError);
    expect((error as Error).message).toContain("'summary' (sources[0])");
    expect((error as Error).message).toContain("exited with code 3");
    expect((error as Error).message).toMatch(/stderr:\nnoise\nindex missing$/);
  });

  it("reports a generator that cannot start with the field to fix", async () => {
    const source = { type: "computed_file", generator: { command: ["no-such-generator-delta-test"] }, output_path: "out.md" };
    const error = await buildContext(config([source]), env()).catch((err: unknown) => err);
    expect((error as Error).message).toContain("command not found: no-such-generator-delta-test. Fix sources[0].generator.command.");
  });

  it("kills a generator that runs past its timeout and says which limit to raise", async () => {
    const pidFile = join(root, "generator.pid");
    const source = {
      type: "computed_file",
      id: "slow",
      generator: { command: ["sh", "-c", `echo $$ > ${pidFile}; sleep 30`], timeout_ms: 200 },
      output_path: "out.md",
    };
    const error = await buildContext(config([source]), env()).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(EngineError);
    expect((error as Error).message).toContain("timed out after 200 ms");
    expect((error as Error).message).toContain("sources[0].generator.timeout_ms");
    const pid = Number((await readFile(pidFile, "utf8")).trim());
    expect(() => process.kill(pid, 0)).toThrow();
  });

  it("applies on_missing to a generator that succeeded without writing its output", async () => {
    const silent = { type: "computed_file", id: "summary", generator: { command: ["true"] }, output_path: "${CWD}/never.md" };
    expect(await buildContext(config([{ ...silent, on_missing: "skip" }]), env())).toEqual([]);
    const error = await buildContext(config([silent]), env()).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain("sources[0].output_path");
  });

  it("keeps only the configured number of iterations from the journal", async () => {
    const events: JournalEvent[] = [task];
    for (let iteration = 1; iteration <= 3; iteration += 1) {
      events.push({ seq: events.length + 1, timestamp: task.timestamp, type: "THOUGHT", iteration, content: `t${iteration}`, tool_calls: [], usage: null, model: "m" });
    }
    const messages = await buildContext(config([{ type: "journal", max_iterations: 1 }]), env({ events }));
    expect(messages).toEqual([{ role: "user", content: "do the thing" }, { role: "assistant", content: "t3" }]);
  });
});

describe("buildContext within a budget", () => {
  const at = (seq: number, event: Record<string, unknown>): JournalEvent => ({ seq, timestamp: "2025-01-01T00:00:00.000Z", ...event }) as JournalEvent;
  /** The task, then `count` iterations each with an observation of `size` bytes. */
  function journal(count: number, size: number): JournalEvent[] {
    const events: JournalEvent[] = [at(1, { type: "USER_MESSAGE", content: "do the thing" })];
    for (let n = 1; n <= count; n += 1) {
      events.push(at(events.length + 1, { type: "THOUGHT", iteration: n, content: null, tool_calls: [{ id: `c${n}`, name: "read", arguments: "{}" }], usage: null, model: "m" }));
      events.push(at(events.length + 1, { type: "ACTION_RESULT", iteration: n, action_id: `c${n}`, tool_name: "read", status: "SUCCESS", observation_content: `${n} ${"x".repeat(size)}`, exit_code: 0, duration_ms: 1 }));
    }
    return events;
  }
  const withPrompt = config([{ type: "file", id: "system_prompt", path: "${AGENT_HOME}/system_prompt.md" }, { type: "journal" }]);
  // An unknown model: the 3-bytes-a-token estimate counts, no tokenizer to load.
  const budget = (contextWindow: number, maxTokens?: number) => contextBudget({ model: "local-model", context_window: contextWindow, max_tokens: 100 }, maxTokens === undefined ? withPrompt : config([{ type: "file", path: "${AGENT_HOME}/system_prompt.md" }, { type: "journal", max_tokens: maxTokens }]));

  beforeEach(async () => {
    await writeFile(join(agentHome, "system_prompt.md"), "You are careful.");
  });

  it("counts nothing and moves nothing while the request's bytes are within the window", async () => {
    const built = await build(withPrompt, env({ events: journal(5, 300), budget: budget(100_000) }));
    expect(built).toMatchObject({ windowEvent: null, estimatedTokens: null });
    expect(built.messages).toHaveLength(2 + 5 * 2);
  });

  it("moves the window when the model's window is passed, and counts the request", async () => {
    // Each iteration ≈ 110 tokens by the estimate; 20 of them are far more than 1,500 − 100 for the reply.
    const built = await build(withPrompt, env({ events: journal(20, 300), budget: budget(1_500) }));
    expect(built.windowEvent).toMatchObject({ type: "CONTEXT_WINDOW", iteration: 21, reason: "context_window", dropped_from: 1 });
    expect(built.estimatedTokens).not.toBeNull();
    expect(built.estimatedTokens!).toBeLessThanOrEqual(1_400);
    expect(built.messages.slice(0, 2)).toEqual([{ role: "system", content: "You are careful." }, { role: "user", content: "do the thing" }]);
    expect(built.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "c20" });
  });

  it("moves on the journal's max_tokens before the model's window, by the estimate while it is far from the limit", async () => {
    const built = await build(withPrompt, env({ events: journal(20, 300), budget: budget(100_000, 600) }));
    // Without a provider's count the estimate is trusted with half of max_tokens: the move records that share, and no token sizes.
    expect(built.windowEvent).toEqual({ type: "CONTEXT_WINDOW", iteration: 21, reason: "max_tokens", first_iteration: 20, dropped_from: 1, dropped_to: 19, limit: 300 });
    expect(built.estimatedBy).toBe("bytes");
  });

  it("fails with CONTEXT_OVERFLOW naming the sizes when the last iteration alone does not fit", async () => {
    const error = await build(withPrompt, env({ events: journal(3, 6_000), budget: budget(1_500) })).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ContextOverflowError);
    expect((error as ContextOverflowError).message).toMatch(/The smallest context this run can send needs \d+ tokens .* the model's window, 1500 tokens, leaves 1400 once 100 are kept for the reply/);
    expect((error as ContextOverflowError).sizes.limitTokens).toBe(1_500);
  });

  it("after an overflow, believes the server's window when its count of the request is believable", async () => {
    const events = journal(10, 300);
    const built = await build(withPrompt, env({ events, budget: budget(100_000), overflow: { sizes: { limitTokens: 900, requestedTokens: 1_500 }, sentEstimate: 1_200 } }));
    expect(built.windowEvent).toMatchObject({ reason: "overflow", overflow: { window_tokens: 900, sent_estimate: 1_200, server_limit_tokens: 900, server_requested_tokens: 1_500 } });
    // Calibrated by the server's count (×1.25), the request keeps within 900 less the reply's 100.
    expect(built.estimatedTokens! * 1.25).toBeLessThanOrEqual(800);
  });

  it("after an overflow without believable sizes, keeps to 90% of what was sent", async () => {
    const built = await build(withPrompt, env({ events: journal(10, 300), budget: budget(100_000), overflow: { sizes: { limitTokens: 1_048_565, requestedTokens: 1_250_025 }, sentEstimate: 1_200 } }));
    expect(built.windowEvent).toMatchObject({ reason: "overflow", overflow: { window_tokens: Math.floor((1_200 + 100) * 0.9) } });
  });

  it("tells a generator where the window starts, and runs it again when the window moves", async () => {
    await writeFile(join(agentHome, "gen.sh"), 'echo "$DELTA_WINDOW_FIRST_ITERATION" >> "$DELTA_CWD/firsts.txt"; echo "summary" > "$DELTA_CWD/summary.md"\n');
    const withSummary = config([
      { type: "file", path: "${AGENT_HOME}/system_prompt.md" },
      { type: "computed_file", id: "summary", generator: { command: ["sh", "${AGENT_HOME}/gen.sh"] }, output_path: "${CWD}/summary.md" },
      { type: "journal" },
    ]);
    const built = await build(withSummary, env({ events: journal(20, 300), budget: contextBudget({ model: "local-model", context_window: 1_500, max_tokens: 100 }, withSummary) }));
    const first = (built.windowEvent as { first_iteration: number }).first_iteration;
    expect((await readFile(join(cwd, "firsts.txt"), "utf8")).trim().split("\n")).toEqual(["1", String(first)]);
    expect(built.messages[1]).toEqual({ role: "system", content: "# Context Block: summary\n\nsummary\n" });
  });
});
