import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { readJournal } from "../support/journal-read.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ChatMessage, LlmRequest } from "../../src/conversation.js";
import { journalConversation } from "../../src/context/journal-messages.js";

import { openRequestParts, partsOf, readRequestParts, rebuildRequest, requestPartsPath, type RenderedFrom } from "../../src/store/request-parts.js";
import { stageRunDir, type RunPaths } from "../../src/store/run-dir.js";
import { parseRunId } from "../../src/store/run-id.js";

let workDir: string;
let paths: RunPaths;
beforeEach(() => {
  workDir = mkdtempSync(join(tmpdir(), "request-parts-"));
  paths = stageRunDir(workDir, parseRunId("r1")).publish();
});
afterEach(() => rmSync(workDir, { recursive: true, force: true }));

const tools: LlmRequest["tools"] = [{ type: "function", function: { name: "read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } } } } }];

/** The conversation after `turns` tool calls, each observation 2 KB: every request repeats the previous one. */
function conversation(turns: number): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: "system", content: "You read files." }, { role: "user", content: "Read them all" }];
  for (let turn = 1; turn <= turns; turn += 1) {
    messages.push({ role: "assistant", content: null, tool_calls: [{ id: `call_${turn}`, name: "read", arguments: JSON.stringify({ path: `f${turn}` }) }] });
    messages.push({ role: "tool", tool_call_id: `call_${turn}`, content: `${turn}:`.padEnd(2048, "x") });
  }
  return messages;
}

const request = (messages: ChatMessage[]): LlmRequest => ({ model: "m", messages, tools, params: { temperature: 0 } });

describe("request parts", () => {
  it("stores each message and the tool list once, so a growing conversation costs what is new, and gives every request back exactly", () => {
    const parts = openRequestParts(paths, []);
    const requests = Array.from({ length: 60 }, (_, turn) => request(conversation(turn)));
    const refs = requests.map((each) => parts.store(each));
    parts.close();

    const file = requestPartsPath(paths);
    const lines = readFileSync(file, "utf8").trimEnd().split("\n");
    expect(lines).toHaveLength(1 + 2 + 2 * 59);
    // Tools first, then the conversation: each reference is one run of numbers.
    expect(refs[59]).toEqual({ model: "m", messages: [[2, 121]], tools: 1, params: { temperature: 0 } });
    expect(statSync(file).size).toBeLessThan(1.2 * Buffer.byteLength(JSON.stringify(requests[59])));

    const all = readRequestParts(paths);
    refs.forEach((ref, index) => expect(JSON.stringify(rebuildRequest(ref, all, `record ${index}`))).toBe(JSON.stringify(requests[index])));
  });

  it("keeps a window that dropped old turns, a message repeated and a changed tool list as references to what is stored", () => {
    const parts = openRequestParts(paths, []);
    const full = conversation(6);
    const dropped = [full[0]!, full[1]!, ...full.slice(8)];
    const repeated: ChatMessage[] = [...full, { role: "user", content: "again" }, { role: "user", content: "again" }];
    const otherTools = { ...request(full), tools: [...tools, { ...tools[0]!, function: { ...tools[0]!.function, name: "write" } }] };
    const stored = [request(full), request(dropped), request(repeated), otherTools].map((each) => ({ each, ref: parts.store(each) }));
    parts.close();
    expect(stored[1]!.ref.messages).toEqual([[2, 3], [10, 15]]);
    expect(stored[2]!.ref.messages).toEqual([[2, 16], [16, 16]]);
    expect(stored[3]!.ref.tools).toBe(17);
    const all = readRequestParts(paths);
    for (const { each, ref } of stored) expect(JSON.stringify(rebuildRequest(ref, all, "record"))).toBe(JSON.stringify(each));
  });

  it("a later process (continue) finds the parts an earlier one stored, after cutting off a line torn by a crash", () => {
    const first = openRequestParts(paths, []);
    first.store(request(conversation(2)));
    first.close();
    const file = requestPartsPath(paths);
    const before = readFileSync(file, "utf8");
    appendFileSync(file, '{"n":7,"sha256":"torn","message":{"role":"us');
    const second = openRequestParts(paths, []);
    const ref = second.store(request(conversation(3)));
    second.close();
    const after = readFileSync(file, "utf8");
    expect(after.startsWith(before)).toBe(true);
    expect(after.slice(before.length).trimEnd().split("\n")).toHaveLength(2);
    expect(ref.messages).toEqual([[2, 9]]);
    expect(JSON.stringify(rebuildRequest(ref, readRequestParts(paths, partsOf(ref)), "record"))).toBe(JSON.stringify(request(conversation(3))));
  });

  it("redacts the run's secrets in every part, as in a whole record", () => {
    const secret = "sk-live-0123456789abcdef";
    const parts = openRequestParts(paths, [secret]);
    parts.store(request([{ role: "user", content: `use ${secret}` }]));
    parts.close();
    const text = readFileSync(requestPartsPath(paths), "utf8");
    expect(text).not.toContain(secret);
    expect(text).toContain("[REDACTED]");
  });

  it("names the record and the part when a part it refers to is missing", () => {
    const parts = openRequestParts(paths, []);
    const ref = parts.store(request(conversation(1)));
    parts.close();
    expect(() => rebuildRequest({ ...ref, messages: [[2, 9]] }, readRequestParts(paths), "io/invocations/x.json")).toThrow(
      "io/invocations/x.json: request part 6 is missing from request-parts.jsonl",
    );
  });

  describe("pointers instead of copies", () => {
    const at = "2026-01-01T00:00:00.000Z";
    const observation = (turn: number) => `${turn}:`.padEnd(2048, "o");
    /** A journal of `turns` tool calls with 2 KB observations: the last one failed, the one before an error. */
    function writeJournal(turns: number, replace: (line: string) => string = (line) => line): void {
      const events: Record<string, unknown>[] = [{ type: "USER_MESSAGE", content: "Read every file ".repeat(20) }];
      for (let turn = 1; turn <= turns; turn += 1) {
        events.push({ type: "THOUGHT", iteration: turn, content: turn === 2 ? "Thinking it over. ".repeat(20) : null, tool_calls: [{ id: `call_${turn}`, name: "read", arguments: "{}" }], usage: null, model: "m" });
        const status = turn === turns ? "FAILED" : turn === turns - 1 ? "ERROR" : "SUCCESS";
        events.push({ type: "ACTION_RESULT", iteration: turn, action_id: `call_${turn}`, tool_name: "read", status, observation_content: observation(turn), exit_code: status === "FAILED" ? 2 : status === "ERROR" ? null : 0, duration_ms: 1 });
      }
      writeFileSync(paths.journal, events.map((event, index) => replace(JSON.stringify({ seq: index + 1, timestamp: at, ...event }))).join("\n") + "\n");
    }
    /** A request of the system prompt and the journal's conversation, with the event each message renders. */
    const fromJournal = (): { sent: LlmRequest; renderedFrom: RenderedFrom } => {
      const conversation = journalConversation(readJournal(paths.journal));
      return { sent: request([{ role: "system", content: "You read files." }, ...conversation.messages]), renderedFrom: [null, ...conversation.renderedFrom] };
    };

    it("a message rendered from the journal points at its event, and the request comes back exactly, status lines included", () => {
      writeJournal(8);
      const { sent, renderedFrom } = fromJournal();
      const parts = openRequestParts(paths, []);
      const ref = parts.store(sent, renderedFrom);
      parts.close();
      const text = readFileSync(requestPartsPath(paths), "utf8");
      expect(text).not.toContain(observation(3));
      expect(text).toContain(`"content_from":{"seq":7,"field":"observation_content","prefix":""}`);
      expect(text).toContain('"content_from":{"seq":17,"field":"observation_content","prefix":"[exit code 2]\\n"}');
      expect(text).toContain('"content_from":{"seq":15,"field":"observation_content","prefix":"[error] "}');
      expect(text).toContain('"content_from":{"seq":1,"field":"content","prefix":""}');
      expect(text).toContain('"content_from":{"seq":4,"field":"content","prefix":""}');
      expect(statSync(requestPartsPath(paths)).size).toBeLessThan(4000);
      expect(JSON.stringify(rebuildRequest(ref, readRequestParts(paths, partsOf(ref)), "record"))).toBe(JSON.stringify(sent));
    });

    it("points only where the event handed with a message holds its text: a message a hook rewrote, or handed with another event, is stored whole", () => {
      writeJournal(3);
      const { sent, renderedFrom } = fromJournal();
      const rewritten = sent.messages.map((message) => (message.role === "tool" ? { ...message, content: `${message.content} (checked)` } : message));
      const shifted = [null, ...renderedFrom.slice(2), null, null];
      const parts = openRequestParts(paths, []);
      const refs = [parts.store({ ...sent, messages: rewritten }, renderedFrom), parts.store({ ...sent, messages: sent.messages.map((message) => ({ ...message })) }, shifted)];
      parts.close();
      const text = readFileSync(requestPartsPath(paths), "utf8");
      expect(text).not.toContain('"field":"observation_content"');
      expect(text).toContain('"content_from":{"seq":1,"field":"content","prefix":""}');
      expect(JSON.stringify(rebuildRequest(refs[0]!, readRequestParts(paths), "record"))).toBe(JSON.stringify({ ...sent, messages: rewritten }));
      expect(JSON.stringify(rebuildRequest(refs[1]!, readRequestParts(paths), "record"))).toBe(JSON.stringify(sent));
    });

    it("a text the run's secrets were taken out of is stored whole, redacted, since the journal holds it redacted", () => {
      const secret = "sk-live-0123456789abcdef";
      writeJournal(3, (line) => line.replace("1:ooo", `1:${secret}`));
      const { sent, renderedFrom } = fromJournal();
      const parts = openRequestParts(paths, [secret]);
      const ref = parts.store(sent, renderedFrom);
      parts.close();
      const text = readFileSync(requestPartsPath(paths), "utf8");
      expect(text).not.toContain(secret);
      expect(text).not.toContain('"content_from":{"seq":3,');
      expect(text).toContain('"content_from":{"seq":5,');
      const back = rebuildRequest(ref, readRequestParts(paths), "record");
      expect(back.messages[3]!.content).toBe(`1:[REDACTED]${observation(1).slice(5)}`);
    });

    it("a journal changed after the request was stored is named, with the part, rather than giving back another request", () => {
      writeJournal(3);
      const parts = openRequestParts(paths, []);
      const { sent, renderedFrom } = fromJournal();
      const ref = parts.store(sent, renderedFrom);
      parts.close();
      writeJournal(3, (line) => line.replace("2:ooo", "2:xxx"));
      expect(() => rebuildRequest(ref, readRequestParts(paths), "record")).toThrow(/request part \d+ does not match the journal's event 5, which it takes its content from \(a run file was changed\)/);
    });

    it("a context text that grows by appending stores what each request added, and any request comes back alone", () => {
      const notes = (lines: number) => `## Notes\n\n${Array.from({ length: lines }, (_, i) => `- note ${i + 1}: ${"n".repeat(100)}`).join("\n")}\n`;
      const parts = openRequestParts(paths, []);
      const sent: LlmRequest[] = [];
      const refs = [3, 6, 9, 12].map((lines) => {
        const each = request([{ role: "system", content: "You read files." }, { role: "system", content: notes(lines) }, { role: "user", content: "Go on" }]);
        sent.push(each);
        return parts.store(each);
      });
      // A text that does not start with the previous one is stored whole.
      const rewritten = request([{ role: "system", content: "You read files." }, { role: "system", content: `# Rewritten\n${notes(12)}` }, { role: "user", content: "Go on" }]);
      refs.push(parts.store(rewritten));
      sent.push(rewritten);
      parts.close();
      const text = readFileSync(requestPartsPath(paths), "utf8");
      expect(text.split(`- note 1: `)).toHaveLength(3);
      expect(text.split(`- note 12: `)).toHaveLength(3);
      refs.forEach((ref, index) => expect(JSON.stringify(rebuildRequest(ref, readRequestParts(paths, partsOf(ref)), "record")), `request ${index + 1}`).toBe(JSON.stringify(sent[index])));
    });

    it("a message whose fields name content_from themselves does not mislead the reader", () => {
      writeJournal(2);
      const { sent, renderedFrom } = fromJournal();
      const tricky = request([
        ...sent.messages,
        { role: "assistant", content: "x".repeat(300), provider_data: { content_from: { part: 1, append: "" } } as never },
        { role: "assistant", content: `${"x".repeat(300)} and more`, provider_data: { content_from: { part: 2, append: "" } } as never },
      ]);
      const parts = openRequestParts(paths, []);
      parts.store(sent, renderedFrom);
      const ref = parts.store(tricky);
      parts.close();
      expect(JSON.stringify(rebuildRequest(ref, readRequestParts(paths, partsOf(ref)), "record"))).toBe(JSON.stringify(tricky));
    });
  });
});
