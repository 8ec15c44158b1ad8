// An indentation mistake in an agent's YAML is said in our words: the line to fix, how far it is indented, and the columns the lines above it start at.
import { describe, expect, it } from "vitest";
import { parseYamlText } from "../../src/agent/yaml-file.js";
import { ConfigError } from "../../src/errors.js";

function refusal(text: string, firstLine?: number): string {
  try {
    parseYamlText(text, "my-agent/agent.yaml", firstLine === undefined ? {} : { firstLine });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("parsed without an error");
}

describe("an indentation mistake", () => {
  it("a top-level key indented by one space: names the line and the columns above it", () => {
    expect(refusal("name: a\nllm:\n  model: gpt-4o\n tools:\n  - name: x\n")).toBe(
      "my-agent/agent.yaml:4:2: line 4 is indented by 1 space, but the lines above it start at 2 spaces (`model:`, line 3), 0 spaces (`llm:`, line 2). " +
        "YAML reads nesting from indentation: a key belongs to the mapping whose keys start in the same column, and an item's keys line up after its \"- \". " +
        "Indent line 4 exactly as the key it sits beside",
    );
  });

  it("a list item's key not lined up with the key after its \"- \"", () => {
    const message = refusal("tools:\n  - name: x\n   exec: y\n");
    expect(message).toMatch(/^my-agent\/agent\.yaml:3:4: line 3 is indented by 3 spaces, but the lines above it start at 4 spaces \(`name:`, line 2\), 2 spaces \(`- `, line 2\), 0 spaces \(`tools:`, line 1\)\./);
    expect(refusal("tools:\n  - name: x\n  exec: y\n")).toMatch(/^my-agent\/agent\.yaml:3:3: line 3 is indented by 2 spaces, but the lines above it start at 4 spaces \(`name:`, line 2\)/);
  });

  it("a line indented deeper than a key that already has its value", () => {
    expect(refusal("llm:\n  model: gpt-4o\n    temperature: 1\n")).toBe(
      "my-agent/agent.yaml:3:5: line 3 is indented deeper (4 spaces) than line 2 (`model:`, 2 spaces), which already has its value on its own line; " +
        "only a key with nothing after its colon takes nested lines. Indent line 3 by 2 spaces, as `model:`, or move the value below the key",
    );
  });

  it("a tab", () => {
    expect(refusal("llm:\n\tmodel: x\n")).toBe("my-agent/agent.yaml:2:1: line 2 is indented with a tab; YAML indents with spaces only: replace the tab with spaces (two per level)");
  });

  it("names the file's own lines when the YAML starts further down (a SKILL.md's front matter)", () => {
    expect(refusal("name: a\nllm:\n  model: x\n tools: []\n", 2)).toMatch(/^my-agent\/agent\.yaml:5:2: line 5 is indented by 1 space, but the lines above it start at 2 spaces \(`model:`, line 4\)/);
  });

  it("leaves other syntax errors in the parser's words, at their place", () => {
    expect(refusal('name: "abc\nllm: x\n')).toBe('my-agent/agent.yaml:3:1: Missing closing "quote (fix the YAML syntax at that spot)');
  });
});
