// `delta report`: one self-contained HTML file per run or workspace, checked as text (test/hosts/report/ opens it in a real Chromium).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { delta, removeDir } from "../e2e/harness.js";
import { HOSTILE, makeReportRuns, type ReportRuns } from "./report-runs.js";

let runs: ReportRuns;
beforeAll(async () => {
  runs = await makeReportRuns();
}, 60_000);
afterAll(() => removeDir(runs.root));

describe("the report file", () => {
  it("escapes everything from the journal: a tool's </script> and markup arrive as text", () => {
    const page = readFileSync(runs.runFile, "utf8");
    expect(page).not.toContain(HOSTILE);
    expect(page).not.toContain("<img src=x");
    expect(page).toContain("&lt;/script&gt;&lt;script&gt;window.__pwned = 1&lt;/script&gt;");
    expect(page.match(/<script>/g)).toHaveLength(1);
  });

  it("loads nothing from anywhere: a policy that forbids every fetch, and no external reference", () => {
    const page = readFileSync(runs.runFile, "utf8");
    expect(page).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;;`);
    expect(page).not.toMatch(/\b(src|href)=["']?(https?:)?\/\//);
    expect(page).not.toMatch(/@import|url\(/);
  });

  it("goes to stdout without -o, and refuses an unknown run with 126", async () => {
    const out = await delta(["report", "report-2", "-w", runs.ws]);
    expect(out.exitCode, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/^<!doctype html>/);
    expect(out.stdout).toContain("Run report-2");
    const unknown = await delta(["report", "nope", "-w", runs.ws, "-o", join(runs.root, "nope.html")]);
    expect(unknown.exitCode).toBe(126);
    expect(existsSync(join(runs.root, "nope.html"))).toBe(false);
  });
});

