// Grows a real run's journal to a given size for the large-journal rows: its iterations repeated, renumbered, as real JSONL lines.
import { closeSync, openSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";

/**
 * Rewrites the journal of the finished run in `runDir` to hold at least `targetBytes`: its opening events, then its
 * tool-calling iterations again and again (each copy with its own seq, iteration and call ids), then its closing
 * events. Every line is an event the engine wrote, so the journal reads as one long run. metadata.json is told
 * the new size. Returns the journal's bytes and the number of iterations.
 */
export function growJournal(runDir, targetBytes) {
  const path = join(runDir, "journal.jsonl");
  const events = readFileSync(path, "utf8").trimEnd().split("\n").map((line) => JSON.parse(line));
  const firstThought = events.findIndex((event) => event.type === "THOUGHT");
  const lastToolResult = events.findLastIndex((event) => event.type === "ACTION_RESULT");
  if (firstThought === -1 || lastToolResult < firstThought) throw new Error(`${path}: no tool-calling iteration to repeat`);
  const opening = events.slice(0, firstThought);
  const block = events.slice(firstThought, lastToolResult + 1);
  const closing = events.slice(lastToolResult + 1);
  const blockIterations = new Set(block.map((event) => event.iteration)).size;

  const fd = openSync(path, "w", 0o600);
  let seq = 0;
  let bytes = 0;
  let iteration = 0;
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
  try {
    for (const event of opening) put(event);
    for (let copy = 0; bytes < targetBytes; copy += 1) {
      const firstOfCopy = iteration + 1;
      for (const event of block) {
        const renumbered = { ...event, iteration: event.iteration - block[0].iteration + firstOfCopy };
        if (event.action_id !== undefined) renumbered.action_id = `${event.action_id}-${copy}`;
        if (event.tool_calls !== undefined) renumbered.tool_calls = event.tool_calls.map((call) => ({ ...call, id: `${call.id}-${copy}` }));
        put(renumbered);
      }
      iteration += blockIterations;
    }
    for (const event of closing) put(event.iteration === undefined ? event : { ...event, iteration: iteration + 1 });
    flush();
  } finally {
    closeSync(fd);
  }
  const metadataPath = join(runDir, "metadata.json");
  const metadata = JSON.parse(readFileSync(metadataPath, "utf8"));
  if ("journal_bytes" in metadata) metadata.journal_bytes = bytes;
  if ("iterations" in metadata) metadata.iterations = iteration + 1;
  writeFileSync(metadataPath, `${JSON.stringify(metadata, null, 2)}\n`);
  return { bytes, iterations: iteration + 1 };
}
