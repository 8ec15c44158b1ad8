import { describe, expect, it } from "vitest";
import { journalConversation, NO_RESULT_CONTENT } from "../../src/context/journal-messages.js";
import type { ActionStatus, EventOf, JournalEvent, ToolCall } from "../../src/journal/events.js";
import type { ChatMessage } from "../../src/conversation.js";

/** The messages alone of the conversation the journal shows. */
const journalToMessages = (...args: Parameters<typeof journalConversation>) => journalConversation(...args).messages;

/** Builds a journal with consecutive seq numbers from terse event descriptions. */
function journal(...makers: Array<(seq: number) => JournalEvent>): JournalEvent[] {
  return makers.map((make, index) => make(index + 1));
}

const timestamp = "2025-01-01T00:00:00.000Z";

const start = () => (seq: number): JournalEvent => ({
  seq, timestamp, type: "ENGINE_START", run_id: "r", agent_home: "/a", work_dir: "/w", config: {}, engine_version: "0",
});
const user = (content: string) => (seq: number): JournalEvent => ({ seq, timestamp, type: "USER_MESSAGE", content });
const call = (id: string, name = "ls"): ToolCall => ({ id, name, arguments: "{}" });
const thought = (iteration: number, content: string | null, calls: ToolCall[] = []) => (seq: number): JournalEvent => ({
  seq, timestamp, type: "THOUGHT", iteration, content, tool_calls: calls, usage: null, model: "m",
});
const request = (iteration: number, id: string) => (seq: number): JournalEvent => ({
  seq, timestamp, type: "ACTION_REQUEST", iteration, action_id: id, tool_name: "ls", tool_args: {}, resolved_command: ["ls"],
});
const result = (iteration: number, id: string, observation: string, status: ActionStatus = "SUCCESS", exitCode: number | null = 0) =>
  (seq: number): JournalEvent => ({
    seq, timestamp, type: "ACTION_RESULT", iteration, action_id: id, tool_name: "ls", status,
    observation_content: observation, exit_code: exitCode, duration_ms: 1,
  });
const end = () => (seq: number): JournalEvent => ({ seq, timestamp, type: "ENGINE_END", run_id: "r", status: "COMPLETED", final_iteration: 1 });

/** Every assistant tool call must be answered, in order, right after it: what the API demands. */
function expectValidToolPairing(messages: ChatMessage[]): void {
  messages.forEach((message, index) => {
    if (message.role !== "assistant" || !message.tool_calls) return;
    message.tool_calls.forEach((toolCall, offset) => {
      expect(messages[index + 1 + offset]).toMatchObject({ role: "tool", tool_call_id: toolCall.id });
    });
  });
}

describe("journalToMessages", () => {
  it("turns the task, a tool call and its result into user, assistant and tool messages", () => {
    const messages = journalToMessages(journal(
      start(), user("list files"), thought(1, "looking", [call("c1")]), request(1, "c1"), result(1, "c1", "a.txt\n"),
      thought(2, "done"), end(),
    ));
    expect(messages).toEqual([
      { role: "user", content: "list files" },
      { role: "assistant", content: "looking", tool_calls: [call("c1")] },
      { role: "tool", tool_call_id: "c1", content: "a.txt\n" },
      { role: "assistant", content: "done" },
    ]);
  });

  it("keeps a thought's reasoning and provider data on its assistant message, exactly as journaled", () => {
    const providerData = { protocol: "chat-completions", reasoning_field: "reasoning_content", message: { extra_content: { google: { thought_signature: "s==" } } } };
    const reasoned = (seq: number): JournalEvent => ({ ...(thought(1, null, [call("c1")])(seq) as EventOf<"THOUGHT">), reasoning: "think first", provider_data: providerData, finish_reason: "tool_calls" });
    const messages = journalToMessages(journal(start(), user("go"), reasoned, request(1, "c1"), result(1, "c1", "ok")));
    expect(messages[1]).toEqual({ role: "assistant", content: null, tool_calls: [call("c1")], reasoning: "think first", provider_data: providerData });
  });

  it("leaves out a final reply that was cut off or filtered, so continuing asks again; the same text finished stays", () => {
    const ended = (finish: string) => (seq: number): JournalEvent => ({ ...(thought(1, "Here is the list: 1. Alab", [])(seq) as EventOf<"THOUGHT">), finish_reason: finish });
    expect(journalToMessages(journal(start(), user("list"), ended("length"), user("go on")))).toEqual([{ role: "user", content: "list" }, { role: "user", content: "go on" }]);
    expect(journalToMessages(journal(start(), user("list"), ended("content_filter")))).toEqual([{ role: "user", content: "list" }]);
    expect(journalToMessages(journal(start(), user("list"), ended("stop")))).toHaveLength(2);
  });

  it("answers several tool calls of one thought in the order the model made them, whatever order results were journaled in", () => {
    const messages = journalToMessages(journal(
      user("go"), thought(1, null, [call("c1"), call("c2"), call("c3")]),
      result(1, "c2", "second"), result(1, "c3", "third"), result(1, "c1", "first"),
    ));
    expect(messages.slice(1)).toEqual([
      { role: "assistant", content: null, tool_calls: [call("c1"), call("c2"), call("c3")] },
      { role: "tool", tool_call_id: "c1", content: "first" },
      { role: "tool", tool_call_id: "c2", content: "second" },
      { role: "tool", tool_call_id: "c3", content: "third" },
    ]);
  });

  it("answers a call with no recorded result with a placeholder so the conversation stays valid", () => {
    const messages = journalToMessages(journal(user("go"), thought(1, null, [call("c1"), call("c2")]), request(1, "c1"), result(1, "c2", "ok")));
    expect(messages.slice(2)).toEqual([
      { role: "tool", tool_call_id: "c1", content: NO_RESULT_CONTENT },
      { role: "tool", tool_call_id: "c2", content: "ok" },
    ]);
    expectValidToolPairing(messages);
  });

  it("pairs results with the right thought when a provider reuses call ids across replies", () => {
    const messages = journalToMessages(journal(
      user("go"), thought(1, null, [call("0")]), result(1, "0", "one"), thought(2, null, [call("0")]), result(2, "0", "two"),
    ));
    expect(messages.filter((message) => message.role === "tool").map((message) => message.content)).toEqual(["one", "two"]);
  });

  it("puts a user message journaled among a thought's results after those results", () => {
    const messages = journalToMessages(journal(
      user("go"), thought(1, null, [call("c1"), call("c2")]), result(1, "c1", "one"), user("hurry up"), result(1, "c2", "two"),
    ));
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "tool", "tool", "user"]);
    expectValidToolPairing(messages);
  });

  it("marks failed and errored results so the model can tell them from success", () => {
    const messages = journalToMessages(journal(
      user("go"), thought(1, null, [call("c1"), call("c2"), call("c3")]),
      result(1, "c1", "no such file", "FAILED", 2), result(1, "c2", "command not found: foo", "ERROR", null),
      result(1, "c3", "killed", "FAILED", null),
    ));
    expect(messages.slice(2).map((message) => message.content)).toEqual([
      "[exit code 2]\nno such file",
      "[error] command not found: foo",
      "[failed]\nkilled",
    ]);
  });

  it("produces no messages for engine, request, human-input and error events", () => {
    const messages = journalToMessages(journal(
      start(),
      (seq) => ({ seq, timestamp, type: "ERROR", error_type: "LLM_ERROR", error_message: "boom" }),
      (seq) => ({ seq, timestamp, type: "HUMAN_INPUT_REQUEST", iteration: 1, action_id: "a", request_id: "q", prompt: "?", input_type: "text", sensitive: false }),
      (seq) => ({ seq, timestamp, type: "HUMAN_INPUT_RECEIVED", iteration: 1, action_id: "a", request_id: "q", response: "yes" }),
      request(1, "a"),
      end(),
    ));
    expect(messages).toEqual([]);
  });

  it("from a first iteration on, keeps iterations with their results, and every user message in journal order", () => {
    const events = journal(
      user("task"),
      thought(1, "t1", [call("a")]), result(1, "a", "ra"),
      user("also do X"),
      thought(2, "t2", [call("b"), call("c")]), result(2, "b", "rb"), result(2, "c", "rc"),
      user("and Y"),
      thought(3, "t3", [call("d")]), result(3, "d", "rd"),
      thought(4, "t4"),
    );
    const messages = journalToMessages(events, 3);
    expect(messages).toEqual([
      { role: "user", content: "task" },
      { role: "user", content: "also do X" },
      { role: "user", content: "and Y" },
      { role: "assistant", content: "t3", tool_calls: [call("d")] },
      { role: "tool", tool_call_id: "d", content: "rd" },
      { role: "assistant", content: "t4" },
    ]);
    expectValidToolPairing(messages);
    expect(journalToMessages(events, 2).filter((message) => message.role === "tool")).toHaveLength(3);
    expect(journalToMessages(events, 1)).toEqual(journalToMessages(events));
  });

  it("the engine's re-ask goes with the answer before it: shown with it in the window, left out once it is dropped", () => {
    const reask = (content: string) => (seq: number): JournalEvent => ({ seq, timestamp, type: "USER_MESSAGE", content, source: "engine" });
    const events = journal(user("task"), thought(1, "not json"), reask("match the schema"), thought(2, '{"ok": true}'), user("more"), thought(3, "prose"), reask("match it again"));
    expect(journalToMessages(events, 2)).toEqual([
      { role: "user", content: "task" },
      { role: "assistant", content: '{"ok": true}' },
      { role: "user", content: "more" },
      { role: "assistant", content: "prose" },
      { role: "user", content: "match it again" },
    ]);
    expect(journalToMessages(events, 1)).toContainEqual({ role: "user", content: "match the schema" });
  });

  it("rebuilds a long journal without rendering an iteration before the window: what it costs follows the window, not the run", () => {
    const makers: Array<(seq: number) => JournalEvent> = [user("go")];
    for (let iteration = 1; iteration <= 20_000; iteration += 1) {
      makers.push(thought(iteration, "t", [call(`c${iteration}`)]), request(iteration, `c${iteration}`), result(iteration, `c${iteration}`, "out"));
    }
    const first = 20_000 - 49;
    // An iteration before the window may be looked at (its type, its number), never rendered: reading its text or calls throws.
    const rendered = new Set(["content", "tool_calls", "observation_content", "status", "action_id"]);
    const events = journal(...makers).map((event) =>
      "iteration" in event && event.iteration < first
        ? new Proxy(event, { get: (target, key) => (rendered.has(String(key)) ? expect.unreachable(`iteration ${target.iteration} rendered: ${String(key)}`) : Reflect.get(target, key)) })
        : event,
    );
    const messages = journalToMessages(events, first);
    expect(messages).toHaveLength(1 + 50 * 2);
    expect(messages[1]).toMatchObject({ role: "assistant", tool_calls: [{ id: `c${first}` }] });
  });
});

describe("journalConversation across iterations", () => {
  /** A journal as a run grows it, with the cases that pair results: several calls, results out of order, a missing one, an id reused, a user message among results, a cut reply. */
  function grownJournal(seed: number): JournalEvent[] {
    let state = seed;
    const next = (n: number): number => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state % n;
    };
    const makers: Array<(seq: number) => JournalEvent> = [user("go")];
    for (let iteration = 1; iteration <= 12; iteration += 1) {
      const calls = Array.from({ length: next(4) }, (_, index) => call(next(5) === 0 ? "reused" : `c${iteration}-${index}`));
      const cut = next(6) === 0;
      makers.push(cut ? (seq) => ({ ...thought(iteration, "cut", calls)(seq), finish_reason: "length" }) as JournalEvent : thought(iteration, `t${iteration}`, calls));
      const order = calls.map((_, index) => index).sort(() => next(3) - 1);
      for (const index of order) {
        if (next(5) === 0) continue;
        makers.push(result(iteration, calls[index]!.id, `out ${iteration}.${index}`));
        if (next(7) === 0) makers.push(user(`note ${iteration}`));
      }
    }
    return journal(...makers);
  }

  it("builds every prefix of a growing journal as a fresh build of it does, however many builds came before", () => {
    for (let seed = 1; seed <= 40; seed += 1) {
      const events = grownJournal(seed);
      // The array a run's reader keeps and grows, built at every length: with one window, and with the window moving about.
      for (const firstOf of [() => 1 + (seed % 3), (length: number) => 1 + (length % 3)]) {
        const growing: JournalEvent[] = [];
        for (const event of events) {
          growing.push(event);
          const first = firstOf(growing.length);
          const grown = journalConversation(growing, first);
          const fresh = journalConversation(structuredClone(growing), first);
          expect(grown.messages).toEqual(fresh.messages);
          expect(grown.renderedFrom.map((shown) => shown?.seq ?? null)).toEqual(fresh.renderedFrom.map((shown) => shown?.seq ?? null));
          // What a build returns is its own: changing it changes no later build.
          grown.messages.push({ role: "user", content: "changed by a caller" });
        }
      }
    }
  });
});
