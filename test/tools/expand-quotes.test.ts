// exec: templates with an unclosed quote are refused, not split into words behind the author's back.
import { describe, expect, it } from "vitest";
import { expandTool } from "../../src/tools/expand.js";

describe("exec: templates with an unclosed quote", () => {
  const where = { file: "agent.yaml", path: "tools[0]" };
  it.each([`echo 'unterminated \${x}`, `grep "open \${pattern} file`, `echo it's`])("refuses %s instead of splitting what the quote held", (exec) => {
    expect(() => expandTool({ name: "q", exec }, where)).toThrow(/agent\.yaml: tools\[0\]\.exec \(tool 'q'\): a ['"] quote is never closed/);
  });

  it("still accepts escaped and balanced quotes", () => {
    expect(expandTool({ name: "q", exec: `echo "it's" \\' \${x}` }, where).argv).toEqual([{ literal: "echo" }, { literal: "it's" }, { literal: "'" }, { param: "x" }]);
  });
});
