// Bounds on a model's tool-call arguments, checked on the raw text before it is parsed: an over-limit call is refused, never a crash.
//
// A value nested thousands of levels deep overflows the stack of whatever walks it recursively (serializing,
// redacting, freezing); a huge one bloats every later request. Both are caught here, where arguments enter.
import { jsonDepth, nestsDeeperThan } from "../json-depth.js";

/** The largest arguments text accepted, in UTF-8 bytes. */
export const MAX_ARGUMENT_BYTES = 1 << 20;
/** The deepest nesting of arrays and objects accepted. */
export const MAX_ARGUMENT_DEPTH = 64;

/** Why `text` is over a limit, or null when it is within them. Linear in the text, no recursion. */
export function argumentsOverLimit(toolName: string, text: string): string | null {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > MAX_ARGUMENT_BYTES) {
    return `The arguments for '${toolName}' are ${bytes} bytes; at most ${MAX_ARGUMENT_BYTES} bytes are accepted. Send smaller arguments (write large content to a file first).`;
  }
  if (nestsDeeperThan(text, MAX_ARGUMENT_DEPTH)) {
    return `The arguments for '${toolName}' are nested ${jsonDepth(text)} levels deep; at most ${MAX_ARGUMENT_DEPTH} levels are accepted. Send flatter arguments.`;
  }
  return null;
}
