// End to end: every text-format output goes through the terminal stripper as the output port's text path; data formats stay exact.
import { describe, expect, it } from "vitest";
import { delta, setUpE2e, writeAgent } from "./harness.js";

/** A right-to-left override, the three bidi marks, an escape sequence and a C1 control, as a skill's description may carry them. */
const HOSTILE = "safe\u202eexe.txt \u200e\u200f\u061c \u001b]0;owned\u0007 \u009b31m";

const { root } = setUpE2e("delta-text-path-");

function expectStripped(text: string): void {
  for (const char of ["\u202e", "\u200e", "\u200f", "\u061c", "\u001b", "\u0007", "\u009b"]) expect(text).not.toContain(char);
  expect(text).toContain("safe\\u202eexe.txt \\u200e\\u200f\\u061c \\x1b]0;owned\\x07 \\x9b31m");
}

describe("the output port's text path", () => {
  it("delta skills list shows a skill's bidi override and bidi marks as visible escapes; --format json keeps them exact", async () => {
    // A skill's description may hold no C0 or C1 control (the loader refuses them), but bidi controls are letters to it.
    const bidi = "safe\u202eexe.txt \u200e\u200f\u061c";
    const skill = `---\nname: tricky\ndescription: ${JSON.stringify(bidi)}\n---\nbody\n`;
    const agent = writeAgent(
      root,
      { contextYaml: "sources:\n  - type: file\n    path: '${AGENT_HOME}/system_prompt.md'\n  - type: skills\n    paths: [skills]\n  - type: journal\n", files: { "skills/tricky/SKILL.md": skill } },
      "skills-agent",
    );
    const text = await delta(["skills", "list", "--agent", agent]);
    expect(text.exitCode, text.stderr).toBe(0);
    for (const char of ["\u202e", "\u200e", "\u200f", "\u061c"]) expect(text.stdout).not.toContain(char);
    expect(text.stdout).toContain("safe\\u202eexe.txt \\u200e\\u200f\\u061c");
    const json = await delta(["skills", "list", "--agent", agent, "--format", "json"]);
    expect(JSON.parse(json.stdout)).toEqual([expect.objectContaining({ name: "tricky", description: bidi })]);
  });

  it("delta tool expand and tool list show a tool description's controls as escapes", async () => {
    const agent = writeAgent(root, { tools: `tools:\n  - name: tricky\n    description: ${JSON.stringify(HOSTILE)}\n    exec: "true"\n` }, "tool-agent");
    const expanded = await delta(["tool", "expand", agent]);
    expect(expanded.exitCode, expanded.stderr).toBe(0);
    for (const char of ["\u202e", "\u200e", "\u200f", "\u061c", "\u001b", "\u009b"]) expect(expanded.stdout).not.toContain(char);
    const listed = await delta(["tool", "list", agent]);
    expect(listed.exitCode, listed.stderr).toBe(0);
    expectStripped(listed.stdout);
  });
});
