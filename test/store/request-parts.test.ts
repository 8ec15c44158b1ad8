import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ChatMessage, LlmRequest } from "../../src/conversation.js";
import { openRequestParts, partsOf, readRequestParts, rebuildRequest, requestPartsPath } from "../../src/store/request-parts.js";
import { stageRunDir, type RunPaths } from "../../src/store/run-dir.js";

let workDir: string;
let paths: RunPaths;
beforeEach(() => {
  workDir = mkdtempSync(join(tmpdir(), "request-parts-"));
  paths = stageRunDir(workDir, "r1").publish();
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

    const all = readRequestParts(file);
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
    const all = readRequestParts(requestPartsPath(paths));
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
    expect(JSON.stringify(rebuildRequest(ref, readRequestParts(file, partsOf(ref)), "record"))).toBe(JSON.stringify(request(conversation(3))));
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
    expect(() => rebuildRequest({ ...ref, messages: [[2, 9]] }, readRequestParts(requestPartsPath(paths)), "io/invocations/x.json")).toThrow(
      "io/invocations/x.json: request part 6 is missing from request-parts.jsonl",
    );
  });
});
