// The one owner of a run's files in this process: its journal (one reader, one writer), io records, engine.log and metadata.json.
//
// Opened once per process and passed down. Reading needs nothing; writing needs the run's secrets
// (RunSecrets, made only by secrets.ts), so nothing can write a run's files unredacted. The reader,
// the writer and the folds share what they learn: a journal is parsed once per process, its later
// reads parse only what was appended (and not even that when this process wrote it). Each event is
// folded as it is parsed and kept only while a request can still show it (journal/shown-journal.ts),
// so a journal of any size costs what its window holds. Every event appended reaches its listeners
// (the reader's cache of written lines, stream-json, live trace, metadata) through one subscription.
import { getHeapSpaceStatistics } from "node:v8";
import { humanBytes } from "../byte-size.js";
import type { JournalEvent } from "../journal/events.js";
import { createFoldTracker } from "../journal/fold.js";
import { landmarksFold, type Landmarks } from "../journal/landmarks.js";
import { createJournalReader, readFirstEvent, type JournalReader, type JournalSink, type ReadCost } from "../journal/reader.js";
import { createShownEvents, type ShownJournal } from "../journal/shown-journal.js";
import { trackRunState, type RunState } from "../journal/run-state.js";
import { openJournal, type JournalWriter } from "../journal/writer.js";
import { createWrittenLines } from "../journal/written-lines.js";
import type { RunSecrets } from "../secrets.js";
import { createEngineLogger, createInvocationLog, writeBatchRequest, writeHookRecord, writeToolExecution, type EngineLogger, type InvocationLog, type IoRecord, type RequestRecords } from "./io-log.js";
import { windowFold } from "../journal/window-state.js";
import { writeMetadata, type RunMetadata } from "./run-metadata.js";
import type { RunPaths } from "./run-dir.js";

export interface RunFiles {
  /** The run's paths: they change once, when a staged run is published (see `published`). */
  readonly paths: RunPaths;
  /** The journal's first event (ENGINE_START), from the events already read or else from its first line alone. */
  firstEvent(): JournalEvent | null;
  /** The journal as the next request can show it, with the window state of all of it; parses only what was appended since the last read. */
  shown(): ShownJournal;
  /** The run's state after the journal as it is now (read as `events` reads it). */
  state(): RunState;
  /** Its first and last events, each ENGINE_START, the last ENGINE_END…, folded on the same read as `state`. `quiet`: no warning about a torn last line (a read before the run is taken). */
  landmarks(options?: { quiet?: boolean }): Landmarks;
  /** What reading the journal has cost this process so far: a `continue` parses it fully once. */
  readCost(): ReadCost;
  /** Opens the journal for writing (once: a second call returns the same files), and io/, engine.log and metadata.json with it. */
  startWriting(options: WritingOptions): Promise<WritableRunFiles>;
}

/** Told each event this process appends to the journal, as recorded and as its line (without the newline), in append order. */
export type AppendListener = (event: JournalEvent, line: string) => void;

interface WritingOptions {
  /** What must never reach any of the run's files. */
  secrets: RunSecrets;
  /** Why this process no longer owns the run, or null while it does (see store/lease/take-run.ts). */
  owner?: () => string | null;
  /** Told when the writer cuts a torn last line. */
  warn: (line: string) => void;
  /** How model calls are recorded in io/invocations. */
  requestRecords: RequestRecords;
  /** Subscribed before the first event is appended (`--format stream-json`'s stdout). */
  listener?: AppendListener | undefined;
}

export interface WritableRunFiles extends RunFiles {
  readonly secrets: RunSecrets;
  /** The journal's one writer in this process. */
  readonly journal: JournalWriter;
  /** Adds a listener of every event appended from now on, for as long as the files are open. */
  subscribe(listener: AppendListener): void;
  /** io/invocations: the records of this process's model calls. */
  readonly invocations: InvocationLog;
  /** One line of engine.log (best effort). */
  log(line: string): void;
  writeMetadata(metadata: RunMetadata, options?: { durable?: boolean }): void;
  writeToolExecution(record: IoRecord & { tool_name: string }): string;
  writeHookRecord(hookName: string, record: IoRecord): string;
  /** io/batch/: a request queued for a batch; returns its path relative to the run directory. */
  writeBatchRequest(record: IoRecord & { custom_id: string }): string;
  /** The staged run directory was renamed to its published place: the same files, under `paths` from now on. */
  published(paths: RunPaths): void;
  /** Closes the journal, engine.log and io/, logging what reading the journal cost. */
  close(): void;
}

export function openRunFiles(paths: RunPaths, options: { warn: (line: string) => void }): RunFiles {
  let current = paths;
  const written = createWrittenLines();
  const tracker = createFoldTracker();
  const runState = trackRunState(tracker);
  const marks = tracker.register(landmarksFold);
  const window = tracker.register(windowFold);
  const kept = createShownEvents();
  let reader: JournalReader | null = null;
  let writable: Promise<WritableRunFiles> | null = null;
  // A valid last line not yet terminated was folded: the next read starts over rather than fold it twice once it is.
  let foldedUnterminated = false;
  const sink: JournalSink = {
    restart: () => {
      tracker.reset();
      kept.clear();
    },
    event: (event) => {
      tracker.see(event);
      kept.add(event, window().first);
    },
  };

  const read = (how: { quiet?: boolean } = {}): void => {
    // Made on first read: a new run's journal is written in its staged directory, and read only once it is published.
    reader ??= createJournalReader(current.journal, { written, warn: options.warn });
    const unterminated = reader.read(sink, { quiet: how.quiet, fromStart: foldedUnterminated });
    foldedUnterminated = unterminated !== null;
    if (unterminated) sink.event(unterminated);
  };

  const files: RunFiles = {
    get paths() {
      return current;
    },
    firstEvent: () => (reader === null ? readFirstEvent(current.journal) : marks().first),
    shown: () => {
      read();
      return { events: kept.events(), window: window(), state: runState() };
    },
    state: () => {
      read();
      return runState();
    },
    landmarks: (how = {}) => {
      read(how);
      return marks();
    },
    readCost: () => reader?.cost() ?? { bytesRead: 0, linesParsed: 0, fullParses: 0 },
    startWriting: (writing) => (writable ??= openWriting(writing)),
  };

  async function openWriting(writing: WritingOptions): Promise<WritableRunFiles> {
    const { secrets } = writing;
    // The one subscription to the writer: its listeners in the order they came, this process's reader first.
    const listeners: AppendListener[] = [written.remember];
    if (writing.listener) listeners.push(writing.listener);
    const appended: AppendListener = (event, line) => {
      for (const listener of listeners) listener(event, line);
    };
    const journal = await openJournal(current.journal, { secrets, appended, warn: writing.warn, owner: writing.owner, reader: reader ?? undefined });
    let logger: EngineLogger | null = null;
    let invocations: InvocationLog | null = null;
    const log = (line: string): void => (logger ??= createEngineLogger(current, secrets)).log(line);
    const writableFiles: WritableRunFiles = {
      get paths() {
        return current;
      },
      firstEvent: files.firstEvent,
      shown: files.shown,
      state: files.state,
      landmarks: files.landmarks,
      readCost: files.readCost,
      startWriting: files.startWriting,
      secrets,
      journal,
      subscribe: (listener) => {
        listeners.push(listener);
      },
      get invocations() {
        return (invocations ??= createInvocationLog(current, writing.requestRecords, secrets));
      },
      log,
      writeMetadata: (metadata: RunMetadata, options: { durable?: boolean } = {}) => writeMetadata(current, metadata, { ...options, secrets }),
      writeToolExecution: (record: IoRecord & { tool_name: string }) => writeToolExecution(current, record, secrets),
      writeHookRecord: (hookName: string, record: IoRecord) => writeHookRecord(current, hookName, record, secrets),
      writeBatchRequest: (record: IoRecord & { custom_id: string }) => writeBatchRequest(current, record, secrets),
      published: (paths: RunPaths) => {
        journal.moved(paths.journal);
        current = paths;
      },
      close: () => {
        const cost = files.readCost();
        // Not after the run was taken over: this process writes nothing more to it.
        if (journal.lostReason() === null) {
          log(`journal reads: ${cost.fullParses} from the start, ${cost.linesParsed} lines parsed, ${cost.bytesRead} bytes read`);
          log(memoryLine());
        }
        journal.close();
        logger?.close();
        invocations?.close();
      },
    };
    return writableFiles;
  }

  return files;
}

/** This process's peak RSS so far and the size of V8's young generation now (cli/runtime-flags.ts holds it for a run). */
function memoryLine(): string {
  const young = getHeapSpaceStatistics().find((space) => space.space_name === "new_space")?.space_size ?? 0;
  return `memory: peak RSS ${humanBytes(process.resourceUsage().maxRSS * 1024)}, V8 young generation ${humanBytes(young)}`;
}
