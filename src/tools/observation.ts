// Turns one tool process's output and fate into the bounded text the model sees.
import { boundText } from "./output-bound.js";

interface ObservationFacts {
  stdout: string;
  stderr: string;
  timedOut: boolean;
  timeoutMs: number;
  aborted: boolean;
  spawnError: string | null;
  /** Set when the process ended by a signal the engine did not send. */
  signal: string | null;
  /** The capture limit, set when the output went over it. */
  captureLimit: number | null;
  /** A background process the tool started kept its output open, so the engine stopped reading. */
  outputLeftOpen: boolean;
}

/**
 * stdout then stderr, labelled only when both have text, bounded as one body so the tail (where
 * errors usually are) survives; then one note per fact the model cannot see in the output.
 * The exit code is not noted here: the ACTION_RESULT records it and the context shows it.
 */
export function formatObservation(facts: ObservationFacts, maxBytes: number): string {
  const body = boundText(joinOutputs(facts.stdout, facts.stderr), maxBytes);
  const notes = notesFor(facts);
  if (notes.length === 0) return body === "" ? "(no output)" : body;
  return body === "" ? notes.join("\n") : `${withFinalNewline(body)}${notes.join("\n")}`;
}

function joinOutputs(stdout: string, stderr: string): string {
  if (stdout === "" || stderr === "") return stdout || stderr;
  return `[stdout]\n${withFinalNewline(stdout)}[stderr]\n${stderr}`;
}

function notesFor(facts: ObservationFacts): string[] {
  const notes: string[] = [];
  if (facts.spawnError !== null) notes.push(facts.spawnError);
  if (facts.timedOut) notes.push(`[timed out after ${facts.timeoutMs} ms; the tool's process group was killed]`);
  if (facts.aborted) notes.push("[interrupted; the tool's process group was killed]");
  if (facts.captureLimit !== null) {
    const mib = (facts.captureLimit / (1024 * 1024)).toFixed(0);
    notes.push(`[output exceeded the engine's ${mib} MiB capture limit; the process was stopped and the rest discarded]`);
  }
  if (facts.signal !== null) notes.push(`[killed by signal ${facts.signal}]`);
  if (facts.outputLeftOpen) {
    notes.push("[a background process the tool started kept the tool's output open; the engine stopped reading it once the tool was done. Redirect a background process's output (cmd > file 2>&1 &) to keep it]");
  }
  return notes;
}

function withFinalNewline(text: string): string {
  return text.endsWith("\n") ? text : `${text}\n`;
}
