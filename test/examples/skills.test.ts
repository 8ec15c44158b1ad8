// examples/skills: the recorded run reads the skill with load_skill, writes CHANGELOG.md and runs the skill's check as a declared tool.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { actionResults, delta, modelEnv, setUpE2e } from "../e2e/harness.js";
import { messagesOf, startMockLlm, toolResultsOf } from "../support/mock-llm.js";
import { EXAMPLES } from "./helpers.js";
import { recordingAsScript } from "./recording.js";

const AGENT = join(EXAMPLES, "skills");
const SKILL = join(AGENT, "skills/changelog-entry");
const TASK = "Record in the changelog that list-runs has a new --since flag";
const { root } = setUpE2e("delta-skills-example-");

describe.concurrent("examples/skills", { timeout: 60_000 }, () => {
  it("replays the recording: the skill and its template read, CHANGELOG.md written and checked", async () => {
    const ws = join(root, "replayed");
    const run = await delta(["run", "--agent", AGENT, "-w", ws, "--run-id", "replayed", "--replay", join(AGENT, "recording.jsonl"), "-m", TASK]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(actionResults(ws, "replayed").map((event) => [event.tool_name, event.status])).toEqual([
      ["load_skill", "SUCCESS"], ["load_skill", "SUCCESS"], ["write_file", "SUCCESS"], ["check_changelog", "SUCCESS"],
    ]);
    expect(readFileSync(join(ws, "CHANGELOG.md"), "utf8")).toContain("### Added\n\n- `delta list-runs --since <time>`");
  });

  it("sends the skill's name and description, not its body, and its body only once load_skill asks", async () => {
    const server = await startMockLlm(recordingAsScript(join(AGENT, "recording.jsonl")));
    try {
      const ws = join(root, "live");
      const run = await delta(["run", "--agent", AGENT, "-w", ws, "--run-id", "live", "-m", TASK], { env: modelEnv(server.baseUrl) });
      expect(run.exitCode, run.stderr).toBe(0);
      const first = messagesOf(server.requests[0]!).map((message) => message.content ?? "").join("\n");
      expect(first).toContain("- changelog-entry: Adds an entry to CHANGELOG.md in the Keep a Changelog form.");
      expect(first).not.toContain("# Adding a changelog entry");
      const body = toolResultsOf(server.requests[1]!)[0]!;
      expect(body.startsWith("# Adding a changelog entry\n")).toBe(true);
      expect(body).toContain("Files of skill 'changelog-entry' (read one with load_skill and file): scripts/check-changelog.sh, template.md");
      expect(toolResultsOf(server.requests[2]!)[1]).toBe(readFileSync(join(SKILL, "template.md"), "utf8"));
    } finally {
      await server.close();
    }
  });

  it("skills list shows the skill; the check script refuses a changelog out of form", async () => {
    const list = await delta(["skills", "list", "--agent", AGENT]);
    expect(list.exitCode, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^changelog-entry {2}(\d+ B|\d+\.\d KiB) {2}skills\/changelog-entry\/SKILL\.md\n {17}Adds an entry to CHANGELOG\.md/);

    const bad = join(root, "BAD.md");
    writeFileSync(bad, "# Changelog\n\n## [Unreleased]\n\n### New\n\nsome text\n");
    const check = await execa(join(SKILL, "scripts/check-changelog.sh"), [bad], { reject: false });
    expect(check.exitCode).toBe(1);
    expect(check.stdout).toContain(`${bad}:5: unknown section "### New"`);
    expect(check.stdout).toContain(`${bad}:7: an entry is one line starting with "- "`);
  });
});
