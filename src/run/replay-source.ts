// Loads --replay's recording for llm/replay.ts: the replies of a replies file (.jsonl/.json), or of an earlier run's io/invocations/ read through store/ (with its requests, for a checked replay).
import { existsSync, readdirSync, statSync } from "node:fs";
import { extname, join } from "node:path";
import { z } from "zod";
import { FileRefusedError, ReplayError, errorMessage, type ContextOverflow } from "../errors.js";
import { ProviderDataSchema, UsageSchema } from "../journal/events.js";
import { streamJournal } from "../journal/reader.js";
import type { Recording, ReplayCheckMode } from "../llm/replay.js";
import { readFolderFile } from "../safe-open.js";
import { openRecordedCalls, recordedRunFacts } from "../store/recorded-requests.js";
import type { LlmReply } from "../conversation.js";

// Hand-written replies files may leave out what has an obvious default: {"content": "done"} is a reply.
const ReplyLineSchema = z
  .object({
    content: z.string().nullable().default(null),
    tool_calls: z
      .array(
        z.object({
          id: z.string().min(1).optional(),
          name: z.string().min(1),
          arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).default("{}"),
        }),
      )
      .default([]),
    usage: UsageSchema.nullable().default(null),
    model: z.string().default("replay"),
    finish_reason: z.string().nullable().default(null),
    reasoning: z.string().optional(),
    provider_data: ProviderDataSchema.optional(),
  })
  .refine((reply) => reply.content !== null || reply.tool_calls.length > 0, "a reply needs content or tool_calls");

/**
 * Reads the whole recording now, so a broken one is refused before the run starts (a run directory's records read one at
 * a time, only their order kept). `check`: the run compares each request with the recorded one, which only a run
 * directory holds (its requests are rebuilt when their calls come).
 */
export function loadRecording(source: string, check?: ReplayCheckMode): Recording {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(source).isDirectory();
  } catch (err) {
    throw new ReplayError(`Cannot read the replay source ${source}: ${errorMessage(err)}. Pass a replies file (.jsonl or .json) or a run directory (.delta/<run_id>).`);
  }
  if (isDirectory) return loadRunDir(source, check);
  if (check !== undefined) throw repliesOnly(source, check);
  const extension = extname(source).toLowerCase();
  if (extension === ".jsonl") return inHand(`file ${source}`, parseJsonl(source, readText(source)));
  if (extension === ".json") return inHand(`file ${source}`, parseJsonArray(source, readText(source)));
  throw new ReplayError(`The replay source ${source} must be a .jsonl file (one reply a line), a .json file (an array of replies) or a run directory.`);
}

/** A replies file's recording: the file is bounded (MAX_REPLIES_FILE_BYTES), its replies held. */
function inHand(origin: string, replies: LlmReply[]): Recording {
  return { origin, count: replies.length, reply: (index) => replies[index]!, overflows: new Map() };
}

function parseJsonl(file: string, text: string): LlmReply[] {
  const replies: LlmReply[] = [];
  text.split("\n").forEach((line, index) => {
    if (line.trim() === "") return;
    replies.push(toReply(parseJson(line, `${file}:${index + 1}`), `${file}:${index + 1}`, replies.length));
  });
  return replies;
}

function parseJsonArray(file: string, text: string): LlmReply[] {
  const value = parseJson(text, file);
  if (!Array.isArray(value)) throw new ReplayError(`${file} must hold a JSON array of replies; for one reply per line use a .jsonl file.`);
  return value.map((item, index) => toReply(item, `${file} [${index}]`, index));
}

function toReply(value: unknown, where: string, position: number): LlmReply {
  const parsed = ReplyLineSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue && issue.path.length > 0 ? `field ${issue.path.join(".")}: ` : "";
    throw new ReplayError(`${where}: not a valid reply (${field}${issue?.message ?? "unreadable"}). A reply looks like {"content": "…", "tool_calls": [{"name": "…", "arguments": {…}}]}.`);
  }
  const reply = parsed.data;
  return {
    content: reply.content,
    // Ids must be stable across replays of the same file, so missing ones are derived from position.
    tool_calls: reply.tool_calls.map((call, index) => ({
      id: call.id ?? `call_replay_${position + 1}_${index + 1}`,
      name: call.name,
      arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments),
    })),
    usage: reply.usage,
    model: reply.model,
    finish_reason: reply.finish_reason,
    ...(reply.reasoning !== undefined ? { reasoning: reply.reasoning } : {}),
    ...(reply.provider_data !== undefined ? { provider_data: reply.provider_data } : {}),
  };
}

/** A run directory's replies, each read from its record when its call comes; checked, its requests too, rebuilt the same way. */
function loadRunDir(runDir: string, check: ReplayCheckMode | undefined): Recording {
  const paths = { invocationsDir: join(runDir, "io", "invocations"), journal: join(runDir, "journal.jsonl") };
  try {
    readdirSync(paths.invocationsDir);
  } catch (err) {
    throw new ReplayError(`The replay source ${runDir} is a directory without a readable io/invocations/ (${errorMessage(err)}); pass a run directory (.delta/<run_id>) or a replies file.`);
  }
  if (check !== undefined && !existsSync(paths.journal)) {
    throw new ReplayError(`The replay source ${runDir} has no journal.jsonl beside its io/: a checked replay needs the recorded run's journal (its ids and paths, and the texts its requests point at). Pass the whole run folder.`);
  }
  const calls = asReplayError(() => openRecordedCalls(paths));
  // A reply is all a plain replay needs: content-addressed requests are rebuilt only to be checked.
  const recording: Recording = {
    origin: `run directory ${runDir}`,
    count: calls.count,
    reply: (index) => asReplayError(() => calls.reply(index)),
    overflows: recordedOverflows(runDir),
  };
  if (check === undefined) return recording;
  const facts = asReplayError(() => recordedRunFacts(paths));
  return { ...recording, requests: { facts, request: (index) => asReplayError(() => calls.request(index)) } };
}

/** --until-divergence and --replay-strict compare requests, which a replies file does not hold. */
function repliesOnly(source: string, check: ReplayCheckMode): ReplayError {
  const flag = check === "strict" ? "--replay-strict" : "--until-divergence";
  return new ReplayError(
    `${flag} compares each request with the one the recording sent, and ${source} holds replies only. Record a run folder instead: ` +
      `run the agent once (with a model, or with --replay ${source}), then pass that run's folder, <workspace>/.delta/<run-id>, to --replay.`,
  );
}

function asReplayError<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    throw new ReplayError(errorMessage(err));
  }
}

/** Where the run's journal says a request was refused as too long: the CONTEXT_WINDOW overflow events, by the model calls before them. */
function recordedOverflows(runDir: string): Map<number, ContextOverflow> {
  const overflows = new Map<number, ContextOverflow>();
  const path = join(runDir, "journal.jsonl");
  if (!existsSync(path)) return overflows;
  let calls = 0;
  // Streamed: only the overflows are kept, whatever the journal's size.
  streamJournal(path, (event) => {
    if (event.type === "THOUGHT") calls += 1;
    if (event.type !== "CONTEXT_WINDOW" || !event.overflow) return;
    const { server_limit_tokens: limitTokens, server_requested_tokens: requestedTokens } = event.overflow;
    overflows.set(calls, { ...(limitTokens !== undefined ? { limitTokens } : {}), ...(requestedTokens !== undefined ? { requestedTokens } : {}) });
  });
  return overflows;
}

/** A replies file this size or larger is refused rather than read. */
const MAX_REPLIES_FILE_BYTES = 256 << 20;

/**
 * The replies file the command line names: a symlink there is the user's and is followed, but what it
 * names must be a regular file, opened without blocking and read within a bound (a FIFO or /dev/zero would never end).
 */
function readText(file: string): string {
  try {
    return readFolderFile({ path: file, folder: null, maxBytes: MAX_REPLIES_FILE_BYTES, what: "a replies file" }).toString("utf8");
  } catch (err) {
    throw new ReplayError(`Cannot read ${file}: ${err instanceof FileRefusedError ? err.problem : errorMessage(err)}.`);
  }
}

function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ReplayError(`${where}: not valid JSON (${errorMessage(err)}).`);
  }
}
