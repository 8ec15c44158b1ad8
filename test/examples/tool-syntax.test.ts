// examples/tool-syntax: each tool form really runs on the recording, and `delta tool expand` shows each expansion.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { actionResults, delta, setUpE2e } from "../e2e/harness.js";
import { EXAMPLES } from "./helpers.js";

const AGENT = join(EXAMPLES, "tool-syntax");
const { root } = setUpE2e("delta-tool-syntax-");

describe.concurrent("examples/tool-syntax", () => {
  it("runs every tool for real on the recording", async () => {
    const ws = join(root, "ws");
    const run = await delta(["run", "--agent", AGENT, "-w", ws, "--run-id", "syntax", "--format", "json", "--replay", join(AGENT, "recording.jsonl"), "-m", "show every form"]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: "COMPLETED", metrics: { iterations: 6 } });

    const results = actionResults(ws, "syntax").map((event) => [event.tool_name, event.status, event.observation_content]);
    expect(results).toEqual([
      ["save_note", "SUCCESS", "Apples\nbananas\napple pie\n"],
      ["save_note", "SUCCESS", "buy flour\n"],
      ["say", "SUCCESS", "you said: $(whoami); rm -rf / # stays literal\n"],
      ["count_matches", "SUCCESS", "2\n"],
      ["list_files", "SUCCESS", "notes.txt\ntodo.txt\n"],
      ["search_text", "SUCCESS", "1:green apple\n"],
    ]);
    expect(readFileSync(join(ws, "notes.txt"), "utf8")).toBe("Apples\nbananas\napple pie\n");
    expect(readFileSync(join(ws, "todo.txt"), "utf8")).toBe("buy flour\n");
  });

  it("tool expand prints the argv plan of each form", async () => {
    const expand = await delta(["tool", "expand", AGENT]);
    expect(expand.exitCode, expand.stderr).toBe(0);
    const out = expand.stdout;
    expect(out).toContain(`  - name: say\n    description: Echo a text back, prefixed with "you said:".\n    command:\n      - echo\n      - "you said:"\n      - \${text}\n`);
    expect(out).toMatch(/- name: save_note[\s\S]*?command:\n\s+- tee\n\s+- --\n\s+- \$\{file\}[\s\S]*?- name: content\n[\s\S]*?inject_as: stdin/);
    expect(out).toContain(`      - sh\n      - -c\n      - grep -i -- "$1" "$2" | wc -l | tr -d ' '\n      - --\n`);
    expect(out).toContain(`      - sh\n      - -c\n      - ls -1 -- $1\n      - --\n`);
    expect(out).toMatch(/- name: glob\n(\s+\w+: .*\n)*?\s+raw: true/);
    expect(out).toMatch(/- name: search_text[\s\S]*?command:\n\s+- grep\n\s+- -n\n[\s\S]*?inject_as: option\n\s+option_name: --max-count[\s\S]*?inject_as: argument[\s\S]*?inject_as: stdin/);
  });
});
