// `delta report`: one self-contained HTML file per run or workspace, checked as text and in a real headless Chromium.
import { existsSync, mkdirSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import puppeteer, { type Browser } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fault, reply, startMockLlm } from "../support/mock-llm.js";
import { REPO, delta, listIo, modelEnv, readEvents, removeDir, tempDir, writeAgent } from "../e2e/harness.js";

const CHROMIUM = process.env.DELTA_CHROMIUM ?? "/usr/bin/chromium";
/** Set to 1 only where no Chromium can be installed; then the browser checks are skipped, loudly. */
const SKIP_BROWSER = process.env.DELTA_SKIP_BROWSER_TESTS === "1";
const ARTIFACTS = join(REPO, "test-artifacts");
const HOSTILE = `</script><script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">`;

const TOOLS = `tools:
  - name: echo
    exec: "echo \${text}"
  - name: fail
    shell: "echo failing >&2; exit 3"
`;

let root: string;
let ws: string;
let runFile: string;
let workspaceFile: string;

beforeAll(async () => {
  root = tempDir("delta-report-");
  const agent = writeAgent(root, { tools: TOOLS });
  ws = join(root, "ws");
  const server = await startMockLlm([
    // run "report-1": three iterations, a tool that fails, and a tool whose output is hostile markup.
    reply.toolCalls([{ name: "echo", arguments: { text: "first" } }, { name: "fail", arguments: {} }], "Two tools.", { usage: { prompt_tokens: 100, completion_tokens: 10 } }),
    reply.toolCalls([{ name: "echo", arguments: { text: HOSTILE } }], null, { usage: { prompt_tokens: 200, completion_tokens: 20 } }),
    reply.text(`Done. ${HOSTILE}`, { usage: { prompt_tokens: 300, completion_tokens: 30 } }),
    // run "report-2": completes at once; run "report-3": fails.
    reply.text("ok"),
    fault.status(400, { message: "refused on purpose" }),
  ]);
  try {
    for (const [id, expected] of [["report-1", 0], ["report-2", 0], ["report-3", 1]] as const) {
      const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", id, "-m", `task of ${id}`], { env: modelEnv(server.baseUrl) });
      expect(run.exitCode, run.stderr).toBe(expected);
    }
  } finally {
    await server.close();
  }
  runFile = join(root, "run.html");
  workspaceFile = join(root, "workspace.html");
  for (const args of [["report", "report-1", "-w", ws, "-o", runFile], ["report", "-w", ws, "-o", workspaceFile]]) {
    const made = await delta(args);
    expect(made.exitCode, made.stderr).toBe(0);
    expect(made.stderr).toMatch(/^Wrote /);
  }
}, 60_000);
afterAll(() => removeDir(root));

describe("the report file", () => {
  it("escapes everything from the journal: a tool's </script> and markup arrive as text", () => {
    const page = readFileSync(runFile, "utf8");
    expect(page).not.toContain(HOSTILE);
    expect(page).not.toContain("<img src=x");
    expect(page).toContain("&lt;/script&gt;&lt;script&gt;window.__pwned = 1&lt;/script&gt;");
    expect(page.match(/<script>/g)).toHaveLength(1);
  });

  it("loads nothing from anywhere: a policy that forbids every fetch, and no external reference", () => {
    const page = readFileSync(runFile, "utf8");
    expect(page).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;;`);
    expect(page).not.toMatch(/\b(src|href)=["']?(https?:)?\/\//);
    expect(page).not.toMatch(/@import|url\(/);
  });

  it("goes to stdout without -o, and refuses an unknown run with 126", async () => {
    const out = await delta(["report", "report-2", "-w", ws]);
    expect(out.exitCode, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/^<!doctype html>/);
    expect(out.stdout).toContain("Run report-2");
    const unknown = await delta(["report", "nope", "-w", ws, "-o", join(root, "nope.html")]);
    expect(unknown.exitCode).toBe(126);
    expect(existsSync(join(root, "nope.html"))).toBe(false);
  });
});

describe("the report in a headless Chromium", () => {
  let browser: Browser | null = null;
  beforeAll(async () => {
    if (SKIP_BROWSER) {
      console.warn(`[report browser test] SKIPPED because DELTA_SKIP_BROWSER_TESTS=1: the HTML report was not checked in a browser`);
      return;
    }
    if (!existsSync(CHROMIUM)) {
      throw new Error(`No Chromium at ${CHROMIUM}: install it (apt-get install chromium; .ci/run does), point DELTA_CHROMIUM at one, or set DELTA_SKIP_BROWSER_TESTS=1 to skip these checks`);
    }
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
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

  it.skipIf(SKIP_BROWSER)("a run: loads with no console error, one bar per recorded model call and tool execution, hostile output inert, bars open their events", async () => {
    const { page, problems, requests } = await open(runFile);
    const events = readEvents(ws, "report-1");
    const counts = await page.evaluate(() => ({
      model: document.querySelectorAll("svg.timeline rect.bar.model").length,
      tool: document.querySelectorAll("svg.timeline rect.bar.tool").length,
      failedTools: document.querySelectorAll("svg.timeline rect.bar.tool.outcome-FAILED").length,
      tokenBars: document.querySelectorAll("svg.tokens rect.token").length,
      events: document.querySelectorAll("details.event").length,
      pwned: (window as unknown as { __pwned?: number }).__pwned ?? null,
      text: document.body.innerText,
    }));
    expect(counts.model).toBe(listIo(ws, "report-1", "invocations").length);
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
    expect(requests).toEqual([pathToFileURL(runFile).href]);
    expect(readdirSync(ARTIFACTS)).toContain("report-run.png");
  }, 60_000);

  it.skipIf(SKIP_BROWSER)("a workspace: one row per run with its status, iterations and tokens", async () => {
    const { page, problems, requests } = await open(workspaceFile);
    const rows = await page.$$eval("tr.run", (all) => all.map((row) => [row.getAttribute("data-run"), ...[...row.querySelectorAll("td")].slice(1, 3).map((cell) => cell.textContent?.trim())]));
    expect(rows).toEqual([
      ["report-1", "COMPLETED", "3"],
      ["report-2", "COMPLETED", "1"],
      ["report-3", "FAILED", "0"],
    ]);
    await page.screenshot({ path: join(ARTIFACTS, "report-workspace.png"), fullPage: true });
    expect(problems).toEqual([]);
    expect(requests).toEqual([pathToFileURL(workspaceFile).href]);
  }, 60_000);
});
