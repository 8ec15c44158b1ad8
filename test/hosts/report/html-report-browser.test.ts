// `delta report` in a real headless Chromium: a run's timeline and a workspace's table, as a person would open them.
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import puppeteer, { type Browser } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO, listIo, readEvents, removeDir, tempDir } from "../../e2e/harness.js";
import { makeReportRuns, type ReportRuns } from "../../report/report-runs.js";
import { requireBinary } from "../../support/system-packages.js";

const ARTIFACTS = join(REPO, "test-artifacts");

let runs: ReportRuns;
beforeAll(async () => {
  runs = await makeReportRuns();
}, 60_000);
afterAll(() => removeDir(runs.root));

describe("the report in a headless Chromium", () => {
  let browser: Browser | null = null;
  beforeAll(async () => {
    browser = await puppeteer.launch({
      executablePath: process.env.DELTA_CHROMIUM ?? requireBinary("chromium"),
      headless: true,
      userDataDir: tempDir("delta-chromium-"),
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    });
    mkdirSync(ARTIFACTS, { recursive: true });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  /** Opens a file and collects what a person would not see: console errors, page errors, any request but the file itself. */
  async function open(file: string) {
    const page = await browser!.newPage();
    const problems: string[] = [];
    const requests: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error" || message.type() === "warn") problems.push(`console.${message.type()}: ${message.text()}`);
    });
    page.on("pageerror", (error) => problems.push(`page error: ${String(error)}`));
    page.on("request", (request) => requests.push(request.url()));
    await page.setViewport({ width: 1280, height: 900 });
    await page.goto(pathToFileURL(file).href, { waitUntil: "load" });
    return { page, problems, requests };
  }

  it("a run: loads with no console error, one bar per recorded model call and tool execution, hostile output inert, bars open their events", async () => {
    const { page, problems, requests } = await open(runs.runFile);
    const events = readEvents(runs.ws, "report-1");
    const counts = await page.evaluate(() => ({
      model: document.querySelectorAll("svg.timeline rect.bar.model").length,
      tool: document.querySelectorAll("svg.timeline rect.bar.tool").length,
      failedTools: document.querySelectorAll("svg.timeline rect.bar.tool.outcome-FAILED").length,
      tokenBars: document.querySelectorAll("svg.tokens rect.token").length,
      events: document.querySelectorAll("details.event").length,
      pwned: (window as unknown as { __pwned?: number }).__pwned ?? null,
      text: document.body.innerText,
    }));
    expect(counts.model).toBe(listIo(runs.ws, "report-1", "invocations").length);
    expect(counts.model).toBe(3);
    expect(counts.tool).toBe(events.filter((event) => event.type === "ACTION_REQUEST").length);
    expect(counts.tool).toBe(3);
    expect(counts.failedTools).toBe(1);
    expect(counts.tokenBars).toBe(3 * 2);
    expect(counts.events).toBe(events.length);
    expect(counts.pwned).toBeNull();
    expect(counts.text).toContain("</script><script>window.__pwned = 1</script>");
    expect(counts.text).toContain("600 in · 60 out");

    // Clicking the failed tool's bar opens its ACTION_RESULT.
    const seq = await page.$eval("svg.timeline rect.bar.tool.outcome-FAILED", (bar) => bar.getAttribute("data-seq"));
    const failed = events.find((event) => event.seq === Number(seq));
    expect(failed).toMatchObject({ type: "ACTION_RESULT", tool_name: "fail", status: "FAILED", exit_code: 3 });
    expect(await page.$eval(`#event-${seq}`, (details) => (details as HTMLDetailsElement).open)).toBe(false);
    await page.click("svg.timeline rect.bar.tool.outcome-FAILED");
    expect(await page.$eval(`#event-${seq}`, (details) => (details as HTMLDetailsElement).open)).toBe(true);
    await page.click('button[data-expand="all"]');
    expect(await page.$$eval("details.event", (all) => all.every((details) => (details as HTMLDetailsElement).open))).toBe(true);

    await page.screenshot({ path: join(ARTIFACTS, "report-run.png"), fullPage: true });
    expect(problems).toEqual([]);
    expect(requests).toEqual([pathToFileURL(runs.runFile).href]);
    expect(readdirSync(ARTIFACTS)).toContain("report-run.png");
  }, 60_000);

  it("a workspace: one row per run with its status, iterations and tokens", async () => {
    const { page, problems, requests } = await open(runs.workspaceFile);
    const rows = await page.$$eval("tr.run", (all) => all.map((row) => [row.getAttribute("data-run"), ...[...row.querySelectorAll("td")].slice(1, 3).map((cell) => cell.textContent?.trim())]));
    expect(rows).toEqual([
      ["report-1", "COMPLETED", "3"],
      ["report-2", "COMPLETED", "1"],
      ["report-3", "FAILED", "0"],
    ]);
    await page.screenshot({ path: join(ARTIFACTS, "report-workspace.png"), fullPage: true });
    expect(problems).toEqual([]);
    expect(requests).toEqual([pathToFileURL(runs.workspaceFile).href]);
  }, 60_000);
});
