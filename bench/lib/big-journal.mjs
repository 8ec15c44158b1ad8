// Grows a real run's journal to a given size as a long run writes it: one whole period between two of its window moves (CONTEXT_WINDOW) repeated, every line an event the engine wrote, renumbered.
import { closeSync, openSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";

/** The fields that hold an iteration number: shifted by a copy's offset. */
const ITERATION_FIELDS = ["iteration", "first_iteration", "dropped_from", "dropped_to", "final_iteration"];

/**
 * Rewrites the journal of the finished run in `runDir` to hold at least `targetBytes`. The run must have moved its
 * context window at least twice. The journal becomes: its events up to and including its first CONTEXT_WINDOW; the
 * period from just after it through the next CONTEXT_WINDOW, inclusive, again and again (each copy's iteration
 * numbers, `first_iteration`, `dropped_from`, `dropped_to` and tool call ids moved on by the period's iterations);
 * then the rest of the run, moved on likewise; seq renumbered throughout. So the journal reads as one long run that
 * keeps moving its window, as a real run of that length does. metadata.json is told the new size. Returns the
 * journal's bytes, its iterations and its window moves.
 */
export function growJournal(runDir, targetBytes) {
  const path = join(runDir, "journal.jsonl");
  const events = readFileSync(path, "utf8").trimEnd().split("\n").map((line) => JSON.parse(line));
  const moves = events.flatMap((event, index) => (event.type === "CONTEXT_WINDOW" ? [index] : []));
  if (moves.length < 2) throw new Error(`${path}: the run moved its context window ${moves.length} time(s); growing it needs a whole period between two moves`);
  const [start, end] = moves;
  const opening = events.slice(0, start + 1);
  const period = events.slice(start + 1, end + 1);
  const closing = events.slice(end + 1);
  const periodIterations = events[end].iteration - events[start].iteration;
  const finalIteration = events.findLast((event) => event.type === "ENGINE_END")?.final_iteration ?? events.findLast((event) => event.iteration !== undefined).iteration;

  const fd = openSync(path, "w", 0o600);
  let seq = 0;
  let bytes = 0;
  let pending = [];
  let pendingBytes = 0;
  const put = (event) => {
    seq += 1;
    const line = `${JSON.stringify({ ...event, seq })}\n`;
    pending.push(line);
    pendingBytes += line.length;
    bytes += Buffer.byteLength(line);
    if (pendingBytes > 1 << 22) flush();
  };
  const flush = () => {
    writeSync(fd, pending.join(""));
    pending = [];
    pendingBytes = 0;
  };
  let copies = 0;
  let windowMoves = 1;
  try {
    for (const event of opening) put(event);
    for (; copies === 0 || bytes < targetBytes; copies += 1) {
      for (const event of period) put(shifted(event, copies * periodIterations));
      windowMoves += 1;
    }
    for (const event of closing) {
      put(shifted(event, (copies - 1) * periodIterations));
      if (event.type === "CONTEXT_WINDOW") windowMoves += 1;
    }
    flush();
  } finally {
    closeSync(fd);
  }
  const iterations = finalIteration + (copies - 1) * periodIterations;
  const metadataPath = join(runDir, "metadata.json");
  const metadata = JSON.parse(readFileSync(metadataPath, "utf8"));
  if ("journal_bytes" in metadata) metadata.journal_bytes = bytes;
  if ("iterations" in metadata) metadata.iterations = iterations;
  writeFileSync(metadataPath, `${JSON.stringify(metadata, null, 2)}\n`);
  return { bytes, iterations, windowMoves, periodIterations };
}

/** `event` moved on by `offset` iterations: its iteration numbers, and its tool call ids that end in their iteration's number. */
function shifted(event, offset) {
  if (offset === 0) return event;
  const moved = { ...event };
  for (const field of ITERATION_FIELDS) if (typeof moved[field] === "number") moved[field] += offset;
  if (moved.action_id !== undefined) moved.action_id = movedCallId(moved.action_id, event.iteration, offset);
  if (moved.tool_calls !== undefined) moved.tool_calls = moved.tool_calls.map((call) => ({ ...call, id: movedCallId(call.id, event.iteration, offset) }));
  return moved;
}

/** A call id that ends in its iteration's number (the bench's model server names calls `call_<iteration>`) gets the new number; any other id the offset as a suffix. */
function movedCallId(id, iteration, offset) {
  const suffix = `_${iteration}`;
  return id.endsWith(suffix) ? `${id.slice(0, -suffix.length)}_${iteration + offset}` : `${id}-${offset}`;
}
