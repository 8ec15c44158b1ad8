// End to end: -o and report -o create private files (0600), keep an existing file's mode, and refuse a path inside a run's folder.
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reply, type MockLlm } from "../support/mock-llm.js";
import { delta, modelEnv, runDir, writeAgent, setUpE2e } from "./harness.js";

const { root, serve } = setUpE2e();
let server: MockLlm | undefined;


const modeOf = (path: string): number => statSync(path).mode & 0o777;

describe("-o and report -o", () => {
  it("create a new file readable by its owner only, and leave an existing file's mode as it was", async () => {
    server = await serve([reply.text("one"), reply.text("two")]);
    const agent = writeAgent(root, {}, "agent-mode");
    const ws = join(root, "ws-mode");
    const out = join(root, "out");
    mkdirSync(out);
    const fresh = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "m1", "-m", "x", "--format", "json", "-o", join(out, "new.json")], { env: modelEnv(server.baseUrl) });
    expect(fresh.exitCode, fresh.stderr).toBe(0);
    expect(modeOf(join(out, "new.json"))).toBe(0o600);

    writeFileSync(join(out, "shared.json"), "old");
    chmodSync(join(out, "shared.json"), 0o640);
    const again = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "m2", "-m", "x", "--format", "json", "-o", join(out, "shared.json")], { env: modelEnv(server.baseUrl) });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(modeOf(join(out, "shared.json"))).toBe(0o640);
    expect(JSON.parse(readFileSync(join(out, "shared.json"), "utf8"))).toMatchObject({ run_id: "m2" });

    const report = await delta(["report", "m1", "-w", ws, "-o", join(out, "report.html")]);
    expect(report.exitCode, report.stderr).toBe(0);
    expect(modeOf(join(out, "report.html"))).toBe(0o600);
  });

  it("refuse the run's own journal (126, nothing run, the journal untouched), and report -o into a run folder", async () => {
    server = await serve([reply.text("first"), reply.text("never asked")]);
    const agent = writeAgent(root, {}, "agent-journal");
    const ws = join(root, "ws-journal");
    const first = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "j1", "-m", "x"], { env: modelEnv(server.baseUrl) });
    expect(first.exitCode, first.stderr).toBe(0);
    const journal = join(runDir(ws, "j1"), "journal.jsonl");
    const before = readFileSync(journal, "utf8");

    const onJournal = await delta(["continue", "--run-id", "j1", "-w", ws, "-m", "more", "--format", "json", "-o", journal], { env: modelEnv(server.baseUrl) });
    expect(onJournal.exitCode).toBe(126);
    expect(onJournal.stderr).toContain("inside a .delta folder");
    expect(readFileSync(journal, "utf8")).toBe(before);
    expect(server.requests).toHaveLength(1);

    const report = await delta(["report", "j1", "-w", ws, "-o", join(runDir(ws, "j1"), "report.html")]);
    expect(report.exitCode).toBe(126);
    expect(report.stderr).toContain("inside a .delta folder");
  });
});
