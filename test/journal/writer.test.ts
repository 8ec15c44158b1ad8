import { appendFileSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { holdingReader, readJournal } from "../support/journal-read.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EngineError, JournalError, OwnershipLostError } from "../../src/errors.js";
import type { NewEvent } from "../../src/journal/events.js";
import { openJournal } from "../../src/journal/writer.js";
import { runSecrets } from "../../src/secrets.js";

const message = (content: string): NewEvent => ({ type: "USER_MESSAGE", content });

let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "journal-writer-"));
  path = join(dir, "journal.jsonl");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("openJournal", () => {
  it("writes one newline-terminated JSON line per event that the reader returns unchanged", async () => {
    const writer = await openJournal(path, { secrets: runSecrets([]) });
    const first = writer.append({ type: "ENGINE_START", run_id: "r1", agent_home: "/a", work_dir: "/w", config: { model: "m" }, engine_version: "0.1.0" });
    const second = writer.append({ type: "THOUGHT", iteration: 1, content: "hi", tool_calls: [{ id: "c1", name: "ls", arguments: "{}" }], usage: { input_tokens: 3, output_tokens: 4 }, model: "m" });
    writer.sync();
    writer.close();

    const lines = readFileSync(path, "utf8").split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe("");
    expect(JSON.parse(lines[0] ?? "")).toEqual(first);
    expect(readJournal(path)).toEqual([first, second]);
  });

  it("assigns seq from 1 and an ISO-8601 UTC timestamp", async () => {
    const writer = await openJournal(path, { secrets: runSecrets([]) });
    const a = writer.append(message("a"));
    const b = writer.append(message("b"));
    writer.close();
    expect([a.seq, b.seq]).toEqual([1, 2]);
    expect(a.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("continues seq after the last event when a journal is reopened", async () => {
    const first = await openJournal(path, { secrets: runSecrets([]) });
    first.append(message("a"));
    first.append(message("b"));
    first.close();

    const second = await openJournal(path, { secrets: runSecrets([]) });
    expect(second.append(message("c")).seq).toBe(3);
    second.close();
    expect(readJournal(path).map((event) => event.seq)).toEqual([1, 2, 3]);
  });

  it("cuts off a torn last line with a warning so the next event starts on its own line", async () => {
    const first = await openJournal(path, { secrets: runSecrets([]) });
    first.append(message("a"));
    first.close();
    appendFileSync(path, '{"seq":2,"type":"USER_Mes');

    const warnings: string[] = [];
    const second = await openJournal(path, { secrets: runSecrets([]), warn: (line) => warnings.push(line) });
    second.append(message("b"));
    second.close();

    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(path);
    expect(warnings[0]).toContain("torn");
    expect(readFileSync(path, "utf8")).not.toContain("USER_Mes");
    expect(readJournal(path).map((event) => [event.seq, event.type === "USER_MESSAGE" && event.content])).toEqual([[1, "a"], [2, "b"]]);
  });

  it("keeps a complete event whose newline was lost and terminates it before appending", async () => {
    writeFileSync(path, JSON.stringify({ seq: 1, timestamp: "2025-01-01T00:00:00.000Z", type: "USER_MESSAGE", content: "kept" }));
    const writer = await openJournal(path, { secrets: runSecrets([]) });
    expect(writer.append(message("next")).seq).toBe(2);
    writer.close();
    expect(readJournal(path).map((event) => event.type === "USER_MESSAGE" && event.content)).toEqual(["kept", "next"]);
  });

  it("refuses to open a journal with a bad line in the middle", async () => {
    writeFileSync(path, `${JSON.stringify({ seq: 1, timestamp: "t", type: "USER_MESSAGE", content: "a" })}\nnot json\n`);
    await expect(openJournal(path, { secrets: runSecrets([]) })).rejects.toThrow(JournalError);
  });

  it("refuses an event that does not match its schema as an engine bug without writing it", async () => {
    const writer = await openJournal(path, { secrets: runSecrets([]) });
    const invalid = { type: "THOUGHT", iteration: 0, content: null, tool_calls: [], usage: null, model: "m" } as NewEvent;
    expect(() => writer.append(invalid)).toThrow(EngineError);
    expect(() => writer.append(invalid)).toThrow(/^Engine bug: refusing to journal an invalid THOUGHT event \(iteration: exclusiveMinimum \{"comparison":">","limit":0\}\)$/);
    // A field its schema does not name: the reader would drop it, so the event read back would not be the one written.
    const extra = { ...message("x"), surprise: true } as unknown as NewEvent;
    expect(() => writer.append(extra)).toThrow(/invalid USER_MESSAGE event \(\(event\): additionalProperties \{"additionalProperty":"surprise"\}\)/);
    expect(() => writer.append({ type: "NOT_AN_EVENT" } as unknown as NewEvent)).toThrow(/invalid NOT_AN_EVENT event \(type: not an event type of the journal\)/);
    expect(writer.append(message("after")).seq).toBe(1);
    writer.close();
    expect(readJournal(path)).toHaveLength(1);
  });

  it("refuses appends after close", async () => {
    const writer = await openJournal(path, { secrets: runSecrets([]) });
    writer.close();
    expect(() => writer.append(message("late"))).toThrow(/closed/);
  });
});

describe("a writer that may no longer own its run", () => {
  it("stops, writing nothing, when another process appended to the journal behind its back", async () => {
    const writer = await openJournal(path, { secrets: runSecrets([]) });
    writer.append(message("a"));
    appendFileSync(path, `${JSON.stringify({ seq: 2, timestamp: "t", type: "USER_MESSAGE", content: "theirs" })}\n`);
    expect(() => writer.append(message("mine"))).toThrow(OwnershipLostError);
    expect(() => writer.append(message("mine"))).toThrow(/no longer owns run .*another process wrote it/);
    expect(writer.lostReason()).toMatch(/another process wrote it/);
    writer.close();
    expect(readFileSync(path, "utf8")).not.toContain("mine");
  });

  it("stops when the journal was replaced, leaving the new file alone", async () => {
    const writer = await openJournal(path, { secrets: runSecrets([]) });
    writer.append(message("a"));
    const replacement = join(dir, "replacement");
    writeFileSync(replacement, readFileSync(path));
    renameSync(replacement, path);
    expect(() => writer.append(message("late"))).toThrow(/no longer owns run .*journal was replaced/);
    writer.close();
    expect(readJournal(path).map((event) => event.type === "USER_MESSAGE" && event.content)).toEqual(["a"]);
  });

  it("asks its owner before every append and after every sync", async () => {
    let owner: string | null = null;
    const writer = await openJournal(path, { secrets: runSecrets([]), owner: () => owner });
    writer.append(message("a"));
    writer.sync();
    owner = "process 7 took it over";
    expect(() => writer.sync()).toThrow(/process 7 took it over/);
    expect(() => writer.append(message("b"))).toThrow(OwnershipLostError);
    writer.close();
    expect(readJournal(path)).toHaveLength(1);
  });

  it("cuts a 700 MB torn tail, reading it in bounded chunks", async () => {
    const first = await openJournal(path, { secrets: runSecrets([]) });
    first.append(message("a"));
    first.close();
    // A sparse tail of NUL bytes with no newline: what a crash can leave when the file's size was extended first.
    truncateSync(path, statSync(path).size + 700 * 1024 * 1024);
    const warnings: string[] = [];
    expect(readJournal(path, { warn: (line) => warnings.push(line) }).map((event) => event.seq)).toEqual([1]);
    const second = await openJournal(path, { secrets: runSecrets([]), warn: (line) => warnings.push(line) });
    expect(second.append(message("b")).seq).toBe(2);
    second.close();
    expect(warnings).toEqual([expect.stringContaining("ignoring a torn last line (734003200 bytes"), expect.stringContaining("cut off a torn last line (734003200 bytes")]);
    expect(readJournal(path).map((event) => event.seq)).toEqual([1, 2]);
  }, 30_000);
});

describe("openJournal with secrets", () => {
  it("writes [REDACTED] in place of a secret, also where JSON escaping changed its form, and returns the event as written", async () => {
    const writer = await openJournal(path, { secrets: runSecrets(["sk-abc-123456", 'pa"ss-word-1']) });
    const written = writer.append(message('key sk-abc-123456 and pa"ss-word-1'));
    writer.close();
    const text = readFileSync(path, "utf8");
    expect(text).not.toContain("sk-abc-123456");
    expect(text).not.toContain('pa\\"ss-word-1');
    expect(written).toMatchObject({ content: "key [REDACTED] and [REDACTED]" });
    expect(readJournal(path)[0]).toEqual(written);
  });

  it("leaves field names and short keys alone, so a key such as 'x' cannot corrupt the journal", async () => {
    const writer = await openJournal(path, { secrets: runSecrets(["x", "result-key-1"]) });
    writer.append({ type: "ACTION_RESULT", iteration: 1, action_id: "c1", tool_name: "echo", status: "SUCCESS", observation_content: "exit text", exit_code: 0, duration_ms: 1 });
    writer.append({ type: "ACTION_RESULT", iteration: 1, action_id: "c2", tool_name: "echo", status: "SUCCESS", observation_content: "result-key-1", exit_code: 0, duration_ms: 1 });
    writer.close();
    const events = readJournal(path);
    expect(events[0]).toMatchObject({ observation_content: "exit text", exit_code: 0 });
    expect(events[1]).toMatchObject({ observation_content: "[REDACTED]", exit_code: 0 });
  });
});

describe("openJournal after a reader of the same journal", () => {
  const line = (seq: number, content: string): string => `${JSON.stringify({ seq, timestamp: new Date().toISOString(), type: "USER_MESSAGE", content })}\n`;

  it("starts after the prefix the reader verified: the next seq follows the lines appended since, and a torn tail is cut", async () => {
    writeFileSync(path, line(1, "a") + line(2, "b"));
    const reader = holdingReader(path);
    expect(reader.read()).toHaveLength(2);
    appendFileSync(path, `${line(3, "c")}{"seq":4,"ti`);
    const warnings: string[] = [];
    const writer = await openJournal(path, { secrets: runSecrets([]), reader, warn: (text) => warnings.push(text) });
    expect(writer.append(message("d")).seq).toBe(4);
    writer.close();
    expect(readJournal(path).map((event) => event.seq)).toEqual([1, 2, 3, 4]);
    expect(warnings).toEqual([expect.stringContaining("cut off a torn last line")]);
  });

  it("validates the whole file again when it is no longer the one the reader verified", async () => {
    writeFileSync(path, line(1, "a") + line(2, "b"));
    const reader = holdingReader(path);
    expect(reader.read()).toHaveLength(2);
    writeFileSync(join(dir, "other.jsonl"), line(1, "x") + line(3, "gap"));
    renameSync(join(dir, "other.jsonl"), path);
    await expect(openJournal(path, { secrets: runSecrets([]), reader })).rejects.toThrow(/line 2: seq 3 where 2 was expected/);
  });

  it("takes the run's secrets only as RunSecrets: a plain list, or none, does not compile", () => {
    // Checked by tsc (the test files are type-checked): each @ts-expect-error fails the build if its line compiles.
    const attempts = (): unknown[] => [
      // @ts-expect-error a plain string list is not RunSecrets
      openJournal(path, { secrets: ["sk-abc-123456"] }),
      // @ts-expect-error a writer without the run's secrets
      openJournal(path, {}),
    ];
    expect(attempts).toBeTypeOf("function");
  });
});
