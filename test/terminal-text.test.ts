// The one control-sequence stripper: what it shows as escapes, and what it leaves alone.
import { describe, expect, it } from "vitest";
import { terminalSafe } from "../src/terminal-text.js";

describe("terminalSafe", () => {
  it("shows the bidi marks LRM, RLM and ALM as escapes, as it does the overrides and isolates", () => {
    expect(terminalSafe("a\u200eb\u200fc\u061cd")).toBe("a\\u200eb\\u200fc\\u061cd");
    expect(terminalSafe("\u202a\u202e\u2066\u2069")).toBe("\\u202a\\u202e\\u2066\\u2069");
  });

  it("shows C0 (but newline and tab), DEL and C1 as escapes and keeps other text, Arabic and Hebrew letters included", () => {
    expect(terminalSafe("\u001b[2J\u0007\u007f\u0085\u009b")).toBe("\\x1b[2J\\x07\\x7f\\x85\\x9b");
    expect(terminalSafe("line\n\tcell ünï שלום مرحبا")).toBe("line\n\tcell ünï שלום مرحبا");
  });

  it("is idempotent: text already made safe is not changed again", () => {
    const once = terminalSafe("x\u202ey\u001b");
    expect(terminalSafe(once)).toBe(once);
  });
});
