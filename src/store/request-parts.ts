// Content-addressed storage of model requests: each distinct message and tool list of a run is kept once in io/invocations/request-parts.jsonl.
import { createHash } from "node:crypto";
import { closeSync, fstatSync, ftruncateSync, writeSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import type { ChatMessage, FunctionTool, LlmRequest } from "../conversation.js";
import { errorMessage, JournalError, RunFileError } from "../errors.js";
import { fsError } from "../fs-errors.js";
import { scanLines } from "../journal/line-scanner.js";
import { openRunFile, openRunFileForAppend } from "../safe-open.js";
import { redactedJson } from "../secrets.js";
import type { RunPaths } from "./run-dir.js";

export const REQUEST_PARTS_FILE = "request-parts.jsonl";

/** Part numbers as inclusive ranges: [[1, 2], [4, 9]] is parts 1, 2, 4, 5, … 9. */
const PartRangesSchema = z.array(z.tuple([z.number().int().positive(), z.number().int().positive()]));

/** What an invocation record holds in place of the whole request: references to parts plus the small fields. */
export const RequestRefSchema = z.object({
  model: z.string(),
  messages: PartRangesSchema,
  tools: z.number().int().positive(),
  params: z.record(z.string(), z.unknown()),
});
export type RequestRef = z.infer<typeof RequestRefSchema>;

/** One line of request-parts.jsonl: its number, the SHA-256 of its kind and JSON text, and the part itself. */
const PartLineSchema = z.union([
  z.object({ n: z.number().int().positive(), sha256: z.string(), message: z.record(z.string(), z.unknown()) }),
  z.object({ n: z.number().int().positive(), sha256: z.string(), tools: z.array(z.unknown()) }),
]);

export interface RequestParts {
  /** Appends the parts of `request` not yet stored and returns the references that give it back. */
  store(request: LlmRequest): RequestRef;
  close(): void;
}

/** The run's part store for this process; the parts an earlier process stored are found by their hashes. */
export function openRequestParts(paths: RunPaths, secrets: readonly string[]): RequestParts {
  const path = requestPartsPath(paths);
  let fd: number | null = null;
  const known = new Map<string, number>();
  // Messages rendered from the same journal event are the same object every iteration: hashed once.
  const numbered = new WeakMap<object, number>();
  let next = 1;

  const ensureOpen = (): number => {
    if (fd !== null) return fd;
    fd = openRunFileForAppend(path, "the request parts");
    // This process holds the run: a line torn by an earlier crash is cut off before anything is appended.
    const size = fstatSync(fd).size;
    const scan = scanLines(fd, 0, size, (line) => {
      if (line === null) return;
      const parsed = parsePartLine(line.toString("utf8"), path);
      known.set(parsed.sha256, parsed.n);
      next = Math.max(next, parsed.n + 1);
    });
    if (scan.completeBytes < size) ftruncateSync(fd, scan.completeBytes);
    return fd;
  };

  const partNumber = (kind: "message" | "tools", value: ChatMessage | FunctionTool[], lines: string[]): number => {
    const seen = numbered.get(value);
    if (seen !== undefined) return seen;
    const n = hashedPartNumber(kind, value, lines);
    numbered.set(value, n);
    return n;
  };

  const hashedPartNumber = (kind: "message" | "tools", value: ChatMessage | FunctionTool[], lines: string[]): number => {
    const text = redactedJson(value, secrets);
    const sha256 = createHash("sha256").update(`${kind}\n${text}`).digest("hex");
    const found = known.get(sha256);
    if (found !== undefined) return found;
    const n = next;
    next += 1;
    known.set(sha256, n);
    lines.push(`{"n":${n},"sha256":"${sha256}","${kind}":${text}}\n`);
    return n;
  };

  return {
    store(request: LlmRequest): RequestRef {
      const handle = ensureOpen();
      const lines: string[] = [];
      // Tools first: in a conversation that only grows, the messages then stay one run of numbers.
      const tools = partNumber("tools", request.tools, lines);
      const numbers = request.messages.map((message) => partNumber("message", message, lines));
      if (lines.length > 0) {
        try {
          writeSync(handle, lines.join(""));
        } catch (err) {
          throw fsError(`Cannot write ${path}`, err);
        }
      }
      return { model: request.model, messages: toRanges(numbers), tools, params: request.params };
    },
    close(): void {
      if (fd !== null) closeSync(fd);
      fd = null;
    },
  };
}

export function requestPartsPath(paths: Pick<RunPaths, "invocationsDir">): string {
  return join(paths.invocationsDir, REQUEST_PARTS_FILE);
}

/** The parts `wanted` names (all when omitted), read line by line: memory holds those parts and one line. */
export function readRequestParts(path: string, wanted?: ReadonlySet<number>): Map<number, ChatMessage | FunctionTool[]> {
  const parts = new Map<number, ChatMessage | FunctionTool[]>();
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
      if (line === null) throw new JournalError(`${path} line ${lineNumber}: longer than a request part may be`);
      const text = line.toString("utf8");
      const n = Number(/^\{"n":(\d+),/.exec(text)?.[1]);
      if (wanted && !wanted.has(n)) return;
      const parsed = parsePartLine(text, `${path} line ${lineNumber}`);
      parts.set(parsed.n, "tools" in parsed ? (parsed.tools as FunctionTool[]) : (parsed.message as ChatMessage));
    });
  } finally {
    closeSync(fd);
  }
  return parts;
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
  return { model: ref.model, messages, tools, params: ref.params };
}

function parsePartLine(text: string, where: string): z.infer<typeof PartLineSchema> {
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
