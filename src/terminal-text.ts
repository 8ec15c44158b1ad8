// The one control-sequence stripper for text bound for a terminal: C0 (but \n and \t), DEL, C1 and bidi controls become visible escapes.

/**
 * C0 except \n and \t, DEL, C1 (U+0080–U+009F), and the bidi controls: the embeddings, overrides and
 * isolates (U+202A–U+202E, U+2066–U+2069) and the marks (U+200E LRM, U+200F RLM, U+061C ALM), which
 * reorder what is shown as much. ESC is among them, so no escape sequence (OSC 52 clipboard writes,
 * titles, OSC 8 links, screen clears, colours) survives: its introducer is shown as `\x1b` and the
 * rest of it is plain text.
 */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** `text` with every control character shown as a visible escape (`\x1b`, `\u202e`), so what a model, tool, server or run file wrote cannot drive the terminal. */
export function terminalSafe(text: string): string {
  return text.replace(CONTROL, (char) => {
    const code = char.charCodeAt(0);
    return code > 0xff ? `\\u${code.toString(16).padStart(4, "0")}` : `\\x${code.toString(16).padStart(2, "0")}`;
  });
}
