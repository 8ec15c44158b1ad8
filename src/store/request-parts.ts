// Content-addressed storage of model requests: each distinct message and tool list of a run is kept once in io/invocations/request-parts.jsonl;
// a message whose text the journal already holds points at that event, and one that extends the previous request's message there holds what it adds.
import { createHash } from "node:crypto";
import { closeSync, fstatSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import type { ChatMessage, FunctionTool, LlmRequest } from "../conversation.js";
import { errorMessage, JournalError, RunFileError } from "../errors.js";
import type { JournalEvent } from "../journal/events.js";
import { openJsonlAppender, type JsonlAppender } from "../journal/jsonl-appender.js";
import { scanLines } from "../journal/line-scanner.js";
import { streamJournal } from "../journal/reader.js";
import { openRunFile } from "../safe-open.js";
import { redactText, redactedJson } from "../secrets.js";
import type { RunPaths } from "./run-dir.js";

const REQUEST_PARTS_FILE = "request-parts.jsonl";

/** Part numbers as inclusive ranges: [[1, 2], [4, 9]] is parts 1, 2, 4, 5, … 9. */
const PartRangesSchema = z.array(z.tuple([z.number().int().positive(), z.number().int().positive()]));

/** The schema a request asked its final answer to meet (conversation.ts OutputFormat), kept with the request it was sent with. */
export const OutputFormatSchema = z.object({ name: z.string(), schema: z.record(z.string(), z.unknown()), strict: z.boolean() });

/** What an invocation record holds in place of the whole request: references to parts plus the small fields. */
export const RequestRefSchema = z.object({
  model: z.string(),
  messages: PartRangesSchema,
  tools: z.number().int().positive(),
  params: z.record(z.string(), z.unknown()),
  /** Absent from records written before it was kept, and from requests that asked for no schema. */
  output_format: OutputFormatSchema.optional(),
});
type RequestRef = z.infer<typeof RequestRefSchema>;

/**
 * Where a message's content is found instead of in its line: `prefix` then the string `field` of the journal event
 * numbered `seq`, or the content of the earlier part `part` followed by `append`.
 */
const ContentFromSchema = z.union([
  z.object({ seq: z.number().int().positive(), field: z.enum(["content", "observation_content"]), prefix: z.string() }),
  z.object({ part: z.number().int().positive(), append: z.string() }),
]);
type ContentFrom = z.infer<typeof ContentFromSchema>;

/**
 * One line of request-parts.jsonl: its number, the SHA-256 of its kind and JSON text, and the part itself. A message
 * with `content_from` holds "" as its content, which the place named there gives back.
 */
const PartLineSchema = z.union([
  z.object({ n: z.number().int().positive(), sha256: z.string(), message: z.record(z.string(), z.unknown()), content_from: ContentFromSchema.optional() }),
  z.object({ n: z.number().int().positive(), sha256: z.string(), tools: z.array(z.unknown()) }),
]);

/** Shorter texts are copied: a pointer would save too little to be worth following. */
const MIN_POINTED_CHARS = 256;

/** The journal event each message of a request was rendered from, at the message's index (null for one that was not). */
export type RenderedFrom = readonly (JournalEvent | null)[];

interface RequestParts {
  /** Appends the parts of `request` not yet stored and returns the references that give it back; a message rendered from the journal points at its event. */
  store(request: LlmRequest, renderedFrom?: RenderedFrom): RequestRef;
  close(): void;
}

/** The run's part store for this process; the parts an earlier process stored are found by their hashes. */
export function openRequestParts(paths: RunPaths, secrets: readonly string[]): RequestParts {
  const path = requestPartsPath(paths);
  let file: JsonlAppender | null = null;
  const known = new Map<string, number>();
  // Messages rendered from the same journal event are the same object every iteration: hashed once.
  const numbered = new WeakMap<object, number>();
  // The previous request's messages and their part numbers, by position: what a growing message may extend.
  let previous: { messages: readonly ChatMessage[]; numbers: readonly number[] } = { messages: [], numbers: [] };
  const previousAt = (position: number): { message: ChatMessage; n: number } | undefined =>
    position < previous.messages.length ? { message: previous.messages[position]!, n: previous.numbers[position]! } : undefined;
  let next = 1;

  // This process holds the run: a line torn by an earlier crash is cut off before anything is appended.
  const ensureOpen = (): JsonlAppender =>
    (file ??= openJsonlAppender(path, "the request parts", (fd, size) => {
      const scan = scanLines(fd, 0, size, (line) => {
        if (line === null) return;
        const parsed = parsePartLine(line.toString("utf8"), path);
        known.set(parsed.sha256, parsed.n);
        next = Math.max(next, parsed.n + 1);
      });
      return { bytes: scan.completeBytes };
    }));

  const partNumber = (kind: "message" | "tools", value: ChatMessage | FunctionTool[], lines: string[], position = -1, source: JournalEvent | null = null): number => {
    const seen = numbered.get(value);
    if (seen !== undefined) return seen;
    const n = hashedPartNumber(kind, value, lines, position, source);
    numbered.set(value, n);
    return n;
  };

  const hashedPartNumber = (kind: "message" | "tools", value: ChatMessage | FunctionTool[], lines: string[], position: number, source: JournalEvent | null): number => {
    const text = redactedJson(value, secrets);
    const sha256 = createHash("sha256").update(`${kind}\n${text}`).digest("hex");
    const found = known.get(sha256);
    if (found !== undefined) return found;
    const n = next;
    next += 1;
    known.set(sha256, n);
    const pointer = kind === "message" ? contentPointer(value as ChatMessage, text, { event: source, base: previousAt(position) }, secrets) : null;
    lines.push(pointer ? `{"n":${n},"sha256":"${sha256}","message":${pointer.skeleton},"content_from":${JSON.stringify(pointer.from)}}\n` : `{"n":${n},"sha256":"${sha256}","${kind}":${text}}\n`);
    return n;
  };

  return {
    store(request: LlmRequest, renderedFrom?: RenderedFrom): RequestRef {
      const parts = ensureOpen();
      const lines: string[] = [];
      // Tools first: in a conversation that only grows, the messages then stay one run of numbers.
      const tools = partNumber("tools", request.tools, lines);
      const numbers = request.messages.map((message, position) => partNumber("message", message, lines, position, renderedFrom?.[position] ?? null));
      previous = { messages: request.messages, numbers };
      if (lines.length > 0) parts.append(Buffer.from(lines.join("")));
      return { model: request.model, messages: toRanges(numbers), tools, params: request.params, ...(request.output_format ? { output_format: request.output_format } : {}) };
    },
    close(): void {
      file?.close();
      file = null;
    },
  };
}

/**
 * The message whose stored JSON is `text`, with its content left out and where to find it: in `event`, the journal event
 * it was rendered from, or as an extension of `base` (the message at its place in the previous request). Null when it must
 * be stored whole: the content is short, secrets were taken out of it, or putting it back would not give `text` exactly.
 */
function contentPointer(
  message: ChatMessage,
  text: string,
  { event, base }: { event: JournalEvent | null; base: { message: ChatMessage; n: number } | undefined },
  secrets: readonly string[],
): { skeleton: string; from: ContentFrom } | null {
  const content = message.content;
  if (typeof content !== "string" || content.length < MIN_POINTED_CHARS) return null;
  // The journal writer removed the same secrets from the event; a text they changed is not on disk as it is here.
  if (redactText(content, secrets) !== content) return null;
  const from = journalSource(content, event) ?? extendedPart(message, content, base);
  if (from === null) return null;
  const skeleton = redactedJson({ ...message, content: "" }, secrets);
  if (JSON.stringify(withContent(JSON.parse(skeleton) as Record<string, unknown>, content)) !== text) return null;
  return { skeleton, from };
}

/** Where `content` lies in `event`: its text field, after a prefix (a tool result's status line). */
function journalSource(content: string, event: JournalEvent | null): ContentFrom | null {
  const found = event === null ? null : journalText(event);
  if (found === null || !content.endsWith(found.text)) return null;
  return { seq: event!.seq, field: found.field, prefix: content.slice(0, content.length - found.text.length) };
}

/** The field a message renders: a user message's or a reply's content, a tool result's observation. */
function journalText(event: JournalEvent): { field: "content" | "observation_content"; text: string } | null {
  switch (event.type) {
    case "USER_MESSAGE":
      return { field: "content", text: event.content };
    case "THOUGHT":
      return event.content === null ? null : { field: "content", text: event.content };
    case "ACTION_RESULT":
      return { field: "observation_content", text: event.observation_content };
    default:
      return null;
  }
}

/** A context file or generator's output that grew by appending (a notes file, a folded memory) stores what it added. */
function extendedPart(message: ChatMessage, content: string, base: { message: ChatMessage; n: number } | undefined): ContentFrom | null {
  const before = base?.message.content;
  if (base === undefined || base.message.role !== message.role || typeof before !== "string" || before.length < MIN_POINTED_CHARS) return null;
  return content.startsWith(before) ? { part: base.n, append: content.slice(before.length) } : null;
}

function withContent(message: Record<string, unknown>, content: string): Record<string, unknown> {
  message.content = content;
  return message;
}

export function requestPartsPath(paths: Pick<RunPaths, "invocationsDir">): string {
  return join(paths.invocationsDir, REQUEST_PARTS_FILE);
}

/**
 * The parts `wanted` names (all when omitted), read line by line: memory holds those parts, the earlier parts their
 * content extends, and one line. A part whose content lies elsewhere gets it from there, checked against its SHA-256.
 */
export function readRequestParts(paths: Pick<RunPaths, "invocationsDir" | "journal">, wanted?: ReadonlySet<number>): Map<number, ChatMessage | FunctionTool[]> {
  const path = requestPartsPath(paths);
  const lines = new Map<number, { parsed: PartLine; where: string }>();
  const baseOf = new Map<number, number>();
  const load = (take: (n: number) => boolean): void =>
    forEachLine(path, (text, lineNumber) => {
      const n = partNumberOf(text);
      const base = extendedPartOf(text);
      if (base !== null) baseOf.set(n, base);
      if (take(n) && !lines.has(n)) lines.set(n, { parsed: parsePartLine(text, `${path} line ${lineNumber}`), where: `${path} line ${lineNumber}` });
    });
  load((n) => !wanted || wanted.has(n));
  // A wanted part that extends an earlier one needs that one too, and so on back: one more pass reads them all.
  const needed = new Set<number>();
  for (const n of lines.keys()) for (let base = baseOf.get(n); base !== undefined && !lines.has(base) && !needed.has(base); base = baseOf.get(base)) needed.add(base);
  if (needed.size > 0) load((n) => needed.has(n));

  const inJournal = [...lines.values()].flatMap(({ parsed }) => ("content_from" in parsed && parsed.content_from && "seq" in parsed.content_from ? [parsed.content_from.seq] : []));
  const events = inJournal.length > 0 ? journalEvents(paths.journal, new Set(inJournal)) : new Map<number, JournalEvent>();
  const parts = new Map<number, ChatMessage | FunctionTool[]>();
  // In number order: a part that extends another comes after it.
  for (const [n, { parsed, where }] of [...lines].sort(([a], [b]) => a - b)) {
    if ("tools" in parsed) parts.set(n, parsed.tools as FunctionTool[]);
    else if (!parsed.content_from) parts.set(n, parsed.message as ChatMessage);
    else parts.set(n, withContentFrom(parsed, parsed.content_from, { parts, events }, where));
  }
  if (wanted) for (const n of needed) parts.delete(n);
  return parts;
}

type PartLine = z.infer<typeof PartLineSchema>;

/**
 * The part a line's content extends, read without parsing the line: `content_from` is its last field, and its key cannot
 * appear unescaped inside a string, so the last one found is the line's own (one inside the message costs a needless read).
 */
function extendedPartOf(text: string): number | null {
  const at = text.lastIndexOf('"content_from":');
  const found = /^"content_from":\{"part":(\d+),/.exec(text.slice(at, at + 40));
  return at === -1 || found === null ? null : Number(found[1]);
}

/** The message of a part whose content lies elsewhere, with that content put back and its SHA-256 checked. */
function withContentFrom(
  line: PartLine & { message: Record<string, unknown> },
  from: ContentFrom,
  found: { parts: ReadonlyMap<number, ChatMessage | FunctionTool[]>; events: ReadonlyMap<number, JournalEvent> },
  where: string,
): ChatMessage {
  let content: unknown;
  let source: string;
  if ("seq" in from) {
    const text = (found.events.get(from.seq) as Record<string, unknown> | undefined)?.[from.field];
    content = typeof text === "string" ? from.prefix + text : undefined;
    source = `the journal's event ${from.seq}`;
  } else {
    const base = found.parts.get(from.part);
    content = base !== undefined && !Array.isArray(base) && typeof base.content === "string" ? base.content + from.append : undefined;
    source = `request part ${from.part}`;
  }
  if (content === undefined) throw new JournalError(`${where}: request part ${line.n} takes its content from ${source}, which holds no such text; the record cannot be rebuilt`);
  const whole = withContent(line.message, content as string);
  if (createHash("sha256").update(`message\n${JSON.stringify(whole)}`).digest("hex") !== line.sha256) {
    throw new JournalError(`${where}: request part ${line.n} does not match ${source}, which it takes its content from (a run file was changed); the record cannot be rebuilt`);
  }
  return whole as ChatMessage;
}

/** The events numbered in `seqs`, as the journal's reader streams them: no further than the last of them. */
function journalEvents(journal: string, seqs: ReadonlySet<number>): Map<number, JournalEvent> {
  const events = new Map<number, JournalEvent>();
  streamJournal(journal, (event) => {
    if (seqs.has(event.seq)) events.set(event.seq, event);
  }, { untilSeq: [...seqs].reduce((last, seq) => Math.max(last, seq), 0) });
  return events;
}

/** Lines gathered before one append, when a fork's parts are copied. */
const COPY_CHUNK_CHARS = 1 << 20;

/**
 * Copies the parts `wanted` names, and the earlier parts their content extends, from `source`'s request-parts.jsonl to
 * `target`'s (a new run's: a fork), under the same numbers, through the run's appender. A part whose content lies in the
 * journal points at that event's seq in the target's journal (`seqOf`: source seq → target seq) — nothing else changes.
 */
export function copyRequestParts(source: Pick<RunPaths, "invocationsDir">, target: Pick<RunPaths, "invocationsDir">, wanted: ReadonlySet<number>, seqOf: ReadonlyMap<number, number>): void {
  const path = requestPartsPath(source);
  const baseOf = new Map<number, number>();
  forEachLine(path, (text) => {
    const base = extendedPartOf(text);
    if (base !== null) baseOf.set(partNumberOf(text), base);
  });
  const keep = new Set(wanted);
  for (const n of wanted) for (let base = baseOf.get(n); base !== undefined && !keep.has(base); base = baseOf.get(base)) keep.add(base);
  const parts = openJsonlAppender(requestPartsPath(target), "the request parts", () => ({ bytes: 0 }));
  try {
    let lines: string[] = [];
    let chars = 0;
    const flush = (): void => {
      if (lines.length > 0) parts.append(Buffer.from(lines.join("")));
      lines = [];
      chars = 0;
    };
    forEachLine(path, (text, lineNumber) => {
      if (!keep.has(partNumberOf(text))) return;
      const line = `${repointed(text, seqOf, `${path} line ${lineNumber}`)}\n`;
      lines.push(line);
      chars += line.length;
      if (chars >= COPY_CHUNK_CHARS) flush();
    });
    flush();
    parts.sync();
  } finally {
    parts.close();
  }
}

function partNumberOf(text: string): number {
  return Number(/^\{"n":(\d+),/.exec(text)?.[1]);
}

/** The line with its journal pointer moved to the event's seq in the target's journal; a line without one as it is. */
function repointed(text: string, seqOf: ReadonlyMap<number, number>, where: string): string {
  if (!text.includes('"content_from":{"seq":')) return text;
  const line = parsePartLine(text, where);
  if (!("content_from" in line) || !line.content_from || !("seq" in line.content_from)) return text;
  const seq = seqOf.get(line.content_from.seq);
  if (seq === undefined) throw new JournalError(`${where}: request part ${line.n} takes its content from the journal's event ${line.content_from.seq}, which the fork does not hold`);
  // Parsed and written again in the order it was written, only the seq changed.
  const raw = JSON.parse(text) as { content_from: { seq: number } };
  raw.content_from.seq = seq;
  return JSON.stringify(raw);
}

/** Calls `visit` with each line of the file at `path` and its number; a line over the journal's line limit is an error. */
function forEachLine(path: string, visit: (text: string, lineNumber: number) => void): void {
  let fd: number;
  try {
    fd = openRunFile(path);
  } catch (err) {
    if (err instanceof RunFileError) throw err;
    throw new JournalError(`Cannot read ${path}: ${errorMessage(err)}`, { cause: err });
  }
  try {
    let lineNumber = 0;
    scanLines(fd, 0, fstatSync(fd).size, (line) => {
      lineNumber += 1;
      if (line === null) throw new JournalError(`${path} line ${lineNumber}: longer than a line there may be`);
      visit(line.toString("utf8"), lineNumber);
    });
  } finally {
    closeSync(fd);
  }
}

/** The part numbers a reference uses. */
export function partsOf(ref: RequestRef): Set<number> {
  const wanted = new Set<number>([ref.tools]);
  for (const [first, last] of ref.messages) for (let n = first; n <= last; n += 1) wanted.add(n);
  return wanted;
}

/** The request a reference stood for, exactly as it was recorded; `where` names the record in errors. */
export function rebuildRequest(ref: RequestRef, parts: ReadonlyMap<number, ChatMessage | FunctionTool[]>, where: string): LlmRequest {
  const part = (n: number): ChatMessage | FunctionTool[] => {
    const found = parts.get(n);
    if (found === undefined) throw new JournalError(`${where}: request part ${n} is missing from ${REQUEST_PARTS_FILE}; the record cannot be rebuilt`);
    return found;
  };
  const messages: ChatMessage[] = [];
  for (const [first, last] of ref.messages) {
    for (let n = first; n <= last; n += 1) {
      const message = part(n);
      if (Array.isArray(message)) throw new JournalError(`${where}: request part ${n} is a tool list where a message was expected`);
      messages.push(message);
    }
  }
  const tools = part(ref.tools);
  if (!Array.isArray(tools)) throw new JournalError(`${where}: request part ${ref.tools} is a message where the tool list was expected`);
  return { model: ref.model, messages, tools, params: ref.params, ...(ref.output_format ? { output_format: ref.output_format } : {}) };
}

function parsePartLine(text: string, where: string): PartLine {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new JournalError(`${where}: not valid JSON (${errorMessage(err)})`);
  }
  const parsed = PartLineSchema.safeParse(raw);
  if (!parsed.success) throw new JournalError(`${where}: not a request part (${parsed.error.issues[0]?.message ?? "unreadable"}); each line is {"n": …, "sha256": …, "message" or "tools": …}`);
  return parsed.data;
}

function toRanges(numbers: number[]): [number, number][] {
  const ranges: [number, number][] = [];
  for (const n of numbers) {
    const last = ranges[ranges.length - 1];
    if (last && n === last[1] + 1) last[1] = n;
    else ranges.push([n, n]);
  }
  return ranges;
}
