// Bounds a text to a byte budget by keeping its head and tail with a marker saying what was cut.

/** Default budget for what the model sees of one tool's output. */
export const DEFAULT_MAX_OBSERVATION_BYTES = 64 * 1024;

/**
 * Returns `text` unchanged when it fits in `maxBytes` UTF-8 bytes; otherwise its first and last
 * halves of the budget joined by `[... N bytes omitted ...]`. Cuts never split a UTF-8 character,
 * and the marker line itself is not counted in the budget.
 */
export function boundText(text: string, maxBytes: number): string {
  // A UTF-8 string never has more bytes than 3 per UTF-16 unit, so short texts skip the encoding.
  if (text.length * 3 <= maxBytes) return text;
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= maxBytes) return text;

  const headEnd = backToCharStart(bytes, Math.floor(maxBytes / 2));
  const tailStart = forwardToCharStart(bytes, bytes.length - Math.ceil(maxBytes / 2));
  const omitted = tailStart - headEnd;
  const head = bytes.subarray(0, headEnd).toString("utf8");
  const tail = bytes.subarray(tailStart).toString("utf8");
  return `${head}\n[... ${omitted} bytes omitted ...]\n${tail}`;
}

function isContinuationByte(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

function backToCharStart(bytes: Buffer, index: number): number {
  let at = index;
  while (at > 0 && isContinuationByte(bytes[at])) at -= 1;
  return at;
}

function forwardToCharStart(bytes: Buffer, index: number): number {
  let at = index;
  while (at < bytes.length && isContinuationByte(bytes[at])) at += 1;
  return at;
}
