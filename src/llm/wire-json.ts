// A request body's JSON, byte for byte JSON.stringify's, with each element of its top-level arrays (messages, tools, input items) serialized once per process.
//
// Providers hand back the same element objects every iteration for what the journal already held
// (journal-messages.ts renders each event once, the wire forms are cached by message), so a long
// conversation's body costs the new messages' serialization, not the whole conversation's; and the
// body goes out as those pieces, never copied into one string or buffer the size of the window.
const elementJson = new WeakMap<object, Buffer>();

const COMMA = Buffer.from(",");

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
    else pushArray(value as unknown[], pieces);
  }
  pieces.push(Buffer.from("}"));
  return pieces;
}

function pushArray(values: readonly unknown[], pieces: Buffer[]): void {
  pieces.push(Buffer.from("["));
  values.forEach((value, index) => {
    if (index > 0) pieces.push(COMMA);
    pieces.push(elementOf(value));
  });
  pieces.push(Buffer.from("]"));
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
