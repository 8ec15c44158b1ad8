// A request body's JSON, byte for byte JSON.stringify's, with each element of its top-level arrays (messages, tools, input items) serialized once per process.
//
// Providers hand back the same element objects every iteration for what the journal already held
// (journal-messages.ts renders each event once, the wire forms are cached by message), so a long
// conversation's body costs the new messages' serialization, not the whole conversation's. An array
// that starts with the elements of the same key's array in the previous body reuses that array's
// bytes and adds the new elements' to them: a few pieces a call, not a piece per element.
import { coalescePieces } from "./transport/coalesce.js";

const elementJson = new WeakMap<object, Buffer>();

const COMMA = Buffer.from(",");
const OPEN_BRACKET = Buffer.from("[");
const CLOSE_BRACKET = Buffer.from("]");

export function wireJson(body: unknown): Buffer[] {
  if (body === null || typeof body !== "object" || Array.isArray(body) || "toJSON" in body) return [Buffer.from(JSON.stringify(body) ?? "")];
  const pieces: Buffer[] = [];
  let first = true;
  pieces.push(Buffer.from("{"));
  for (const [key, value] of Object.entries(body)) {
    const text = Array.isArray(value) ? null : JSON.stringify(value);
    // JSON.stringify leaves out a field whose value it cannot write (undefined, a function).
    if (!Array.isArray(value) && text === undefined) continue;
    pieces.push(Buffer.from(`${first ? "" : ","}${JSON.stringify(key)}:`));
    first = false;
    if (text !== null && text !== undefined) pieces.push(Buffer.from(text));
    else pushArray(key, value as unknown[], pieces);
  }
  pieces.push(Buffer.from("}"));
  return pieces;
}

function pushArray(key: string, values: readonly unknown[], pieces: Buffer[]): void {
  const last = lastArrays.get(key);
  const kept = last !== undefined && startsWith(values, last.elements) ? last : null;
  const added: Buffer[] = [];
  for (let index = kept?.elements.length ?? 0; index < values.length; index += 1) {
    if (index > 0) added.push(COMMA);
    added.push(elementOf(values[index]));
  }
  // Runs of at most 64 KiB: a turn copies the last run and what it adds, never the whole array, and keeps no buffer large enough to leave the allocator's heap.
  const runs = kept === null ? coalescePieces([OPEN_BRACKET, ...added]) : added.length === 0 ? kept.runs : [...kept.runs.slice(0, -1), ...coalescePieces([kept.runs.at(-1)!, ...added])];
  lastArrays.set(key, { elements: values.slice(), runs });
  pieces.push(...runs, CLOSE_BRACKET);
}

/** Per top-level key, the last body's array: its elements and its bytes up to the closing bracket, in runs. */
const lastArrays = new Map<string, { elements: readonly unknown[]; runs: readonly Buffer[] }>();

function startsWith(values: readonly unknown[], prefix: readonly unknown[]): boolean {
  if (prefix.length > values.length) return false;
  for (let index = 0; index < prefix.length; index += 1) if (values[index] !== prefix[index]) return false;
  return true;
}

function elementOf(value: unknown): Buffer {
  // In an array JSON.stringify writes null for what it cannot write.
  if (value === null || typeof value !== "object") return Buffer.from(JSON.stringify(value) ?? "null");
  let json = elementJson.get(value);
  if (json === undefined) {
    json = Buffer.from(JSON.stringify(value) ?? "null");
    elementJson.set(value, json);
  }
  return json;
}
