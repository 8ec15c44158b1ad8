// Replaying recorded replies from a file or a run directory, and failing loudly when the recording does not fit.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ReplayError } from "../../src/errors.js";
import { InvocationRecordSchema, type InvocationRecord } from "../../src/store/invocation-record.js";
import { createReplayProvider } from "../../src/llm/replay.js";
import { loadRecording } from "../../src/run/replay-source.js";
import { exportReplies } from "../support/replay-export.js";
import type { LlmReply, LlmRequest } from "../../src/conversation.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "delta-replay-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const tool = (name: string) => ({ type: "function" as const, function: { name, description: name, parameters: { type: "object" } } });
const request: LlmRequest = { model: "m", messages: [{ role: "user", content: "go" }], tools: [tool("ls"), tool("ask_human")], params: {} };

const callLs: LlmReply = { content: null, tool_calls: [{ id: "call_1", name: "ls", arguments: '{"dir":"/"}' }], usage: { input_tokens: 10, output_tokens: 2 }, model: "gpt-x", finish_reason: "tool_calls" };
const done: LlmReply = { content: "done", tool_calls: [], usage: null, model: "gpt-x", finish_reason: "stop" };

async function writeJsonl(lines: unknown[]): Promise<string> {
  const file = join(dir, "replies.jsonl");
  await writeFile(file, lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line))).join("\n") + "\n");
  return file;
}

async function writeRunDir(records: { file: string; record: InvocationRecord }[]): Promise<string> {
  const runDir = join(dir, ".delta", "run-1");
  await mkdir(join(runDir, "io", "invocations"), { recursive: true });
  for (const { file, record } of records) await writeFile(join(runDir, "io", "invocations", file), JSON.stringify(InvocationRecordSchema.parse(record), null, 2));
  return runDir;
}

/** The provider `--replay source` makes: the recording loaded by run/, the replies answered by llm/. */
const replayOf = (source: string, options?: Parameters<typeof createReplayProvider>[1]) => createReplayProvider(loadRecording(source), options);

const record = (iteration: number, reply: LlmReply, timestamp = "2025-01-01T00:00:00.000Z"): InvocationRecord => ({ iteration, timestamp, request, reply, duration_ms: 5 });

async function replayError(promise: Promise<unknown>): Promise<ReplayError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  if (!(err instanceof ReplayError)) throw new Error(`expected a ReplayError, got ${String(err)}`);
  return err;
}

describe("createReplayProvider", () => {
  it("returns the replies of a .jsonl file in order", async () => {
    const provider = replayOf(await writeJsonl([callLs, done]));
    expect(await provider.complete(request)).toEqual(callLs);
    expect(await provider.complete(request)).toEqual(done);
  });

  it("fills defaults for hand-written replies, with ids stable across loads", async () => {
    const file = await writeJsonl([{ tool_calls: [{ name: "ls", arguments: { dir: "/tmp" } }] }, { content: "ok" }]);
    const first = await replayOf(file).complete(request);
    expect(first).toEqual({ content: null, tool_calls: [{ id: "call_replay_1_1", name: "ls", arguments: '{"dir":"/tmp"}' }], usage: null, model: "replay", finish_reason: null });
    expect(await replayOf(file).complete(request)).toEqual(first);
  });

  it("accepts a .json file holding an array of replies", async () => {
    const file = join(dir, "replies.json");
    await writeFile(file, JSON.stringify([done]));
    expect(await replayOf(file).complete(request)).toEqual(done);
  });

  it("starts at startIndex, the number of THOUGHTs already in the journal", async () => {
    const provider = replayOf(await writeJsonl([callLs, done]), { startIndex: 1 });
    expect(await provider.complete(request)).toEqual(done);
  });

  it("fails with the count and the file when the recording runs out", async () => {
    const file = await writeJsonl([done]);
    const provider = replayOf(file);
    await provider.complete(request);
    const err = await replayError(provider.complete(request));
    expect(err.message).toBe(`No recorded reply for model call 2: recording exhausted after 1 reply (file ${file}).`);
  });

  it("fails naming the tool and the offered tools when a recorded call no longer fits the agent", async () => {
    const provider = replayOf(await writeJsonl([callLs]));
    const err = await replayError(provider.complete({ ...request, tools: [tool("cat"), tool("ask_human")] }));
    expect(err.message).toMatch(/calls the tool "ls", which this agent does not offer \(offered: cat, ask_human\)/);
  });

  it("names file and line of a line that is not JSON or not a reply", async () => {
    const broken = await writeJsonl([done, "{oops"]);
    expect(() => replayOf(broken)).toThrow(new RegExp(`${broken}:2: not valid JSON`));
    const wrong = await writeJsonl([{ content: 5 }]);
    expect(() => replayOf(wrong)).toThrow(new RegExp(`${wrong}:1: not a valid reply \\(field content`));
    const empty = await writeJsonl([{}]);
    expect(() => replayOf(empty)).toThrow(/a reply needs content or tool_calls/);
  });

  it("refuses a missing source, an unknown extension and a .json that is not an array", async () => {
    expect(() => replayOf(join(dir, "nope.jsonl"))).toThrow(ReplayError);
    await writeFile(join(dir, "replies.txt"), "");
    expect(() => replayOf(join(dir, "replies.txt"))).toThrow(/must be a \.jsonl file/);
    await writeFile(join(dir, "one.json"), JSON.stringify(done));
    expect(() => replayOf(join(dir, "one.json"))).toThrow(/must hold a JSON array/);
  });

  it("replays a run directory's invocations ordered by iteration, not by file name", async () => {
    const runDir = await writeRunDir([
      { file: "20250101T000002000Z_0002.json", record: record(2, done, "2025-01-01T00:00:02.000Z") },
      { file: "20250101T000009000Z_0001.json", record: record(1, callLs, "2025-01-01T00:00:01.000Z") },
    ]);
    const provider = replayOf(runDir);
    expect(await provider.complete(request)).toEqual(callLs);
    expect(await provider.complete(request)).toEqual(done);
    const err = await replayError(provider.complete(request));
    expect(err.message).toContain(`recording exhausted after 2 replies (run directory ${runDir})`);
  });

  it("names the invocation file and field that is invalid", async () => {
    const runDir = await writeRunDir([]);
    const file = join(runDir, "io", "invocations", "bad.json");
    await writeFile(file, JSON.stringify({ ...record(1, done), reply: { ...done, tool_calls: "none" } }));
    expect(() => replayOf(runDir)).toThrow(`${file}: not a valid invocation record (field reply.tool_calls`);
  });

  it("refuses a directory that is not a run directory", () => {
    expect(() => replayOf(dir)).toThrow(/without a readable io\/invocations/);
  });
});

describe("exportReplies", () => {
  it("writes a run's replies as .jsonl that replays the same conversation", async () => {
    const runDir = await writeRunDir([
      { file: "a.json", record: record(2, done) },
      { file: "b.json", record: record(1, callLs) },
    ]);
    const text = exportReplies(runDir);
    expect(text.split("\n")).toHaveLength(3);
    const file = join(dir, "frozen.jsonl");
    await writeFile(file, text);
    const provider = replayOf(file);
    expect(await provider.complete(request)).toEqual(callLs);
    expect(await provider.complete(request)).toEqual(done);
  });
});
