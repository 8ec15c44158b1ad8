// Bounds on a model's tool-call arguments, checked on the raw text before it is parsed: an over-limit call is refused, never a crash.
//
// A value nested thousands of levels deep overflows the stack of whatever walks it recursively (serializing,
// redacting, freezing); a huge one bloats every later request. Both are caught here, where arguments enter.

/** The largest arguments text accepted, in UTF-8 bytes. */
export const MAX_ARGUMENT_BYTES = 1 << 20;
/** The deepest nesting of arrays and objects accepted. */
export const MAX_ARGUMENT_DEPTH = 64;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Why `text` is over a limit, or null when it is within them. Linear in the text, no recursion. */
export function argumentsOverLimit(toolName: string, text: string): string | null {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > MAX_ARGUMENT_BYTES) {
    return `The arguments for '${toolName}' are ${bytes} bytes; at most ${MAX_ARGUMENT_BYTES} bytes are accepted. Send smaller arguments (write large content to a file first).`;
  }
  const depth = nestingDepth(text);
  if (depth > MAX_ARGUMENT_DEPTH) {
    return `The arguments for '${toolName}' are nested ${depth} levels deep; at most ${MAX_ARGUMENT_DEPTH} levels are accepted. Send flatter arguments.`;
  }
  return null;
}

/** The deepest nesting of brackets and braces outside strings. */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === BACKSLASH) index += 1;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      depth += 1;
      if (depth > deepest) deepest = depth;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth -= 1;
    }
  }
  return deepest;
}
