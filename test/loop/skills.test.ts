// load_skill, offline: a skill's instructions and files read from inside its folder (the agent's skills are real files), journaled as a tool call, nothing run; what lies outside is refused.
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadSkills } from "../../src/agent/skills/scan.js";
import type { ContextConfig } from "../../src/context/schema.js";
import { calls, scriptedRun, text } from "./scripted-loop.js";

const PDF_BODY = "# Filling PDF forms\n\nBODY-PDF-7731: run the fill_form tool on each field, then check it.\n";
const SECRET = "SECRET-OUTSIDE-THE-SKILL-9921";

const home = mkdtempSync(join(tmpdir(), "delta-loop-skills-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const files: Record<string, string> = {
  "skills/pdf-forms/SKILL.md": `---\nname: pdf-forms\ndescription: Fills in PDF forms.\nlicense: MIT\n---\n${PDF_BODY}`,
  "skills/pdf-forms/reference.md": "REFERENCE-TEXT: field names are case-sensitive.\n",
  "skills/pdf-forms/scripts/fill.sh": "#!/bin/sh\ntouch fill-ran\n",
  "skills/pdf-forms/big.txt": "x".repeat(70_000),
  "skills/pdf-forms/logo.png": "PNG\0\0binary",
  "skills/pdf-forms/.env": `TOKEN=${SECRET}\n`,
  "skills/changelog/SKILL.md": "---\nname: changelog\ndescription: Writes a changelog entry.\n---\nBODY-CHANGELOG-4410\n",
  "secret.txt": `${SECRET}\n`,
};
for (const [file, content] of Object.entries(files)) {
  mkdirSync(dirname(join(home, file)), { recursive: true });
  writeFileSync(join(home, file), content);
}
chmodSync(join(home, "skills/pdf-forms/scripts/fill.sh"), 0o755);
symlinkSync(join(home, "secret.txt"), join(home, "skills/pdf-forms/link-out.md"));
const { skills } = loadSkills(home, { sources: [{ type: "skills", paths: ["skills"] }, { type: "journal", id: "conversation_history" }] } as ContextConfig);
const PDF_DIR = realpathSync(join(home, "skills/pdf-forms"));

/** A run whose model calls load_skill with each of `args` in one reply, then finishes. */
async function loading(...args: Record<string, string>[]) {
  const run = scriptedRun({ skills, turns: [calls(...args.map((arg): [string, string] => ["load_skill", JSON.stringify(arg)])), text("done")] });
  expect(await run.run()).toEqual({ status: "COMPLETED", result: "done" });
  return run;
}

describe("load_skill", () => {
  it("is offered after ask_human, its names the skills'", async () => {
    const run = scriptedRun({ skills, turns: [text("nothing to do")] });
    await run.run();
    expect(run.requests[0]!.tools.map((tool) => tool.function.name)).toEqual(["echo", "ask_human", "load_skill"]);
    expect(JSON.stringify(run.requests[0]!.tools[2])).toContain('"enum":["changelog","pdf-forms"]');
  });

  it("reads a skill's instructions without the front matter, naming its other files, then a file by name; reading a script runs nothing", async () => {
    const run = await loading({ name: "pdf-forms" }, { name: "pdf-forms", file: "reference.md" }, { name: "pdf-forms", file: "scripts/fill.sh" });
    const [body, reference, script] = run.of("ACTION_RESULT");
    expect(body!.observation_content).toContain(PDF_BODY);
    expect(body!.observation_content).not.toContain("license: MIT");
    expect(body!.observation_content).toContain("Files of skill 'pdf-forms' (read one with load_skill and file): big.txt, link-out.md, logo.png, reference.md, scripts/fill.sh");
    expect(reference).toMatchObject({ status: "SUCCESS", observation_content: files["skills/pdf-forms/reference.md"] });
    expect(script).toMatchObject({ status: "SUCCESS", observation_content: files["skills/pdf-forms/scripts/fill.sh"] });
    expect(run.ran).toEqual([]);
    // Each read has its io/tool_executions/ record, holding what was read.
    expect(run.executions.map((record) => [record.tool_name, record.content])).toEqual([
      ["load_skill", body!.observation_content],
      ["load_skill", reference!.observation_content],
      ["load_skill", script!.observation_content],
    ]);
    expect(run.of("ACTION_REQUEST").map((request) => request.resolved_command)).toEqual([
      ["load_skill", join(PDF_DIR, "SKILL.md")],
      ["load_skill", join(PDF_DIR, "reference.md")],
      ["load_skill", join(PDF_DIR, "scripts/fill.sh")],
    ]);
  });

  it("refuses what lies outside the skill's folder, what is missing, hidden, too large or binary, and a skill that does not exist; nothing outside reaches the model", async () => {
    const refused = [
      [{ name: "pdf-forms", file: "../changelog/SKILL.md" }, "'../changelog/SKILL.md' of skill 'pdf-forms' leads out of the skill's folder"],
      [{ name: "pdf-forms", file: join(home, "secret.txt") }, "is an absolute path"],
      [{ name: "pdf-forms", file: "link-out.md" }, "'link-out.md' of skill 'pdf-forms' leads through a symbolic link out of the skill's folder"],
      [{ name: "pdf-forms", file: "missing.md" }, "'missing.md' of skill 'pdf-forms' is not a file of the skill. Its files: big.txt, link-out.md, logo.png, reference.md, scripts/fill.sh."],
      [{ name: "pdf-forms", file: ".env" }, "'.env' of skill 'pdf-forms' is hidden (a name starting with '.'); only a skill's visible files are read"],
      [{ name: "pdf-forms", file: "big.txt" }, "'big.txt' of skill 'pdf-forms' is 70000 bytes, more than the 65536 bytes load_skill reads"],
      [{ name: "pdf-forms", file: "logo.png" }, "'logo.png' of skill 'pdf-forms' is binary"],
      [{ name: "no-such-skill" }, "No skill 'no-such-skill'. Skills: changelog, pdf-forms."],
      [{ skill: "pdf-forms" }, 'load_skill needs {"name": string, "file"?: string}'],
    ] as const;
    const run = await loading(...refused.map(([args]) => args as Record<string, string>));
    const results = run.of("ACTION_RESULT");
    expect(results.map((result) => result.status)).toEqual(refused.map(() => "ERROR"));
    refused.forEach(([, problem], index) => expect(results[index]!.observation_content).toContain(problem));
    for (const result of results) expect(result.observation_content).not.toMatch(/SECRET-OUTSIDE|BODY-CHANGELOG/);
    // The path checks refuse before anything is read; the size and content checks after the file is named as read.
    expect(run.of("ACTION_REQUEST").map((request) => request.resolved_command?.[1] ?? null)).toEqual([null, null, null, null, null, join(PDF_DIR, "big.txt"), join(PDF_DIR, "logo.png"), null, null]);
  });

  it("runs pre_tool_execution first, as before any tool: a block is the observation and nothing is read", async () => {
    const run = scriptedRun({ skills, turns: [calls(["load_skill", '{"name":"pdf-forms"}']), text("done")], hooks: { pre_tool_execution: () => ({ kind: "block", reason: "skills are off today" }) } });
    await run.run();
    expect(run.of("ACTION_REQUEST")[0]).toMatchObject({ tool_name: "load_skill", resolved_command: null });
    expect(run.of("ACTION_RESULT")[0]).toMatchObject({ status: "ERROR", observation_content: "Blocked by pre_tool_execution hook: skills are off today" });
  });
});
