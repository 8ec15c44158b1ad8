// The HTML report read as a person opens it after a failure, in a real headless Chromium: the outcome and error first at phone and desktop widths, every model attempt and tool call on the timeline, one colour language.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { execa } from "execa";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JournalEvent } from "../../../src/journal/events.js";
import { fault, reply, startMockLlm, type Step } from "../../support/mock-llm.js";
import { requireBinary } from "../../support/system-packages.js";
import { REPO, delta, modelEnv, readEvents, removeDir, tempDir, writeAgent } from "../../e2e/harness.js";

/** Screenshots of every page checked here, kept for people to look at (git-ignored; README.md, Development). */
const ARTIFACTS = join(REPO, "test-artifacts", "report");

const AGENT_YAML = `name: report-agent
llm:
  model: mock-model
  pricing: { input_per_million: 1, output_per_million: 2 }
tools:
  - name: read_file
    exec: "cat -- \${path}"
  - name: fail
    shell: "echo failing >&2; exit 3"
`;

const LONG_TASK = "Read every file under docs/, list the ten longest lines of each with their line numbers, then write a summary of what the files have in common to summary.md";

let root: string;
let ws: string;
let agent: string;
let browser: Browser;
const files: Record<string, string> = {};

async function run(args: string[], steps: Step[], expected: number): Promise<void> {
  const server = await startMockLlm(steps);
  try {
    const result = await delta(args, { env: modelEnv(server.baseUrl), cwd: ws });
    expect(result.exitCode, result.stderr).toBe(expected);
  } finally {
    await server.close();
  }
}

async function report(name: string, args: string[]): Promise<void> {
  files[name] = join(root, `${name}.html`);
  const made = await delta(["report", ...args, "-w", ws, "-o", files[name]!]);
  expect(made.exitCode, made.stderr).toBe(0);
}

beforeAll(async () => {
  const chromium = process.env.DELTA_CHROMIUM ?? requireBinary("chromium");
  root = tempDir("delta-report-hosts-");
  ws = join(root, "ws");
  mkdirSync(ws, { recursive: true });
  agent = writeAgent(root, { agentYaml: AGENT_YAML });
  const lines = Array.from({ length: 60 }, (_, index) => `line ${index + 1}\tof the file`).join("\n");
  mkdirSync(join(ws, "docs"), { recursive: true });
  writeFileSync(join(ws, "docs", "long.txt"), `${lines}\n`);

  // "failed": three answered calls (one tool fails), then a 4th call that gets HTTP 500 four times.
  const usage = (n: number) => ({ usage: { prompt_tokens: 100 * n, completion_tokens: 10 * n } });
  await run(["run", "--agent", agent, "-w", ws, "--run-id", "failed", "-m", "Summarise docs/long.txt"], [
    reply.toolCalls([{ name: "read_file", arguments: { path: "docs/long.txt" } }, { name: "fail", arguments: {} }], "I will read the file and try the failing tool.", usage(1)),
    reply.toolCalls([{ name: "read_file", arguments: { path: "docs/long.txt" } }], "Reading it once more.", usage(2)),
    reply.toolCalls([{ name: "read_file", arguments: { path: "docs/long.txt" } }], null, usage(3)),
    fault.status(500, { retryAfterMs: 150, message: "upstream overloaded" }),
    fault.status(500, { retryAfterMs: 150, message: "upstream overloaded" }),
    fault.status(500, { retryAfterMs: 150, message: "upstream overloaded" }),
    fault.status(500, { message: "upstream overloaded" }),
  ], 1);
  // "asked": ask_human waits for an answer (exit 101), the answer comes with continue, the run completes.
  await run(["run", "--agent", agent, "-w", ws, "--run-id", "asked", "-m", "Count the files"], [
    reply.toolCalls([{ name: "ask_human", arguments: { prompt: "Which file should I count?" } }], "I need to know which file.", usage(1)),
  ], 101);
  await run(["continue", "--run-id", "asked", "-w", ws, "-m", "docs/long.txt"], [reply.text("It has 60 lines.", usage(2))], 0);
  // "long-task": a task longer than a table cell is wide.
  await run(["run", "--agent", agent, "-w", ws, "--run-id", "long-task", LONG_TASK], [reply.text("Done.", usage(1))], 0);

  await report("failed", ["failed"]);
  await report("asked", ["asked"]);
  await report("workspace", []);

  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    userDataDir: tempDir("delta-chromium-"),
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (root) removeDir(root);
});

/** Opens a report at a width; collects console errors and any request but the file itself. */
async function open(file: string, width: number): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warn") problems.push(`console.${message.type()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${String(error)}`));
  page.on("request", (request) => {
    if (request.url() !== pathToFileURL(file).href) problems.push(`request: ${request.url()}`);
  });
  await page.setViewport({ width, height: 740 });
  await page.goto(pathToFileURL(file).href, { waitUntil: "load" });
  return { page, problems };
}

/** The block at the top of the page as a person first sees it: its text and whether it fits the screen. */
async function firstBlock(page: Page): Promise<{ text: string; top: number; bottom: number; viewport: number; atTop: boolean }> {
  return page.evaluate(() => {
    const first = document.body.firstElementChild as HTMLElement;
    const box = first.getBoundingClientRect();
    const hit = document.elementFromPoint(box.left + 8, Math.max(1, box.top + 4));
    return { text: first.innerText, top: box.top, bottom: box.bottom, viewport: window.innerHeight, atTop: hit !== null && first.contains(hit) };
  });
}

const count = (events: JournalEvent[], type: JournalEvent["type"]): number => events.filter((event) => event.type === type).length;

/** Which family a computed colour belongs to, by hue: what a person would call it. */
function family(css: string): string {
  const [r, g, b] = (css.match(/\d+(\.\d+)?/g) ?? []).map(Number) as [number, number, number];
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  if (max - min < 30) return "grey";
  const d = max - min;
  const hue = max === r ? (60 * ((g - b) / d) + 360) % 360 : max === g ? 60 * ((b - r) / d) + 120 : 60 * ((r - g) / d) + 240;
  if (hue < 20 || hue >= 340) return "red";
  if (hue < 55) return "amber";
  if (hue < 170) return "green";
  if (hue < 245) return "blue";
  return "violet";
}

describe("a FAILED run's report", () => {
  for (const width of [375, 1280]) {
    it(`at ${width} px the first block holds the status and the error, on screen`, async () => {
      const { page, problems } = await open(files.failed!, width);
      const block = await firstBlock(page);
      expect(block.text).toContain("FAILED");
      // Three calls were answered; the fourth is the one that failed.
      expect(block.text).toContain("in iteration 4, whose model call failed");
      expect(block.text).toContain("LLM_ERROR");
      expect(block.text).toContain("failed after 4 attempts");
      expect(block.text).toContain("upstream overloaded");
      expect(block.top).toBeGreaterThanOrEqual(0);
      expect(block.bottom).toBeLessThanOrEqual(block.viewport);
      expect(block.atTop).toBe(true);
      if (width === 375) {
        const scroll = await page.evaluate(() => ({ content: document.documentElement.scrollWidth, viewport: document.documentElement.clientWidth }));
        expect(scroll.content).toBeLessThanOrEqual(scroll.viewport);
      }
      await page.screenshot({ path: join(ARTIFACTS, `failed-${width}.png`), fullPage: true });
      expect(existsSync(join(ARTIFACTS, `failed-${width}.png`))).toBe(true);
      expect(problems).toEqual([]);
    }, 60_000);
  }

  it("at 375 px the charts fit the screen and their labels keep their size: no scroll box, no text shrunk to a few pixels", async () => {
    const { page, problems } = await open(files.failed!, 375);
    const view = await page.evaluate(() => {
      const charts = [...document.querySelectorAll(".chart")].map((chart) => ({ scroll: chart.scrollWidth - chart.clientWidth, right: chart.getBoundingClientRect().right }));
      const labels = [...document.querySelectorAll(".chart .tick-label, .chart .row-label, .chart .iteration-label, .chart .token-scale span")]
        .filter((label) => getComputedStyle(label).display !== "none")
        .map((label) => ({ text: label.textContent, size: parseFloat(getComputedStyle(label).fontSize), height: label.getBoundingClientRect().height, right: label.getBoundingClientRect().right, left: label.getBoundingClientRect().left }));
      const timeline = document.querySelector("svg.timeline")!.getBoundingClientRect();
      return { charts, labels, timelineWidth: timeline.width, viewport: document.documentElement.clientWidth, page: document.documentElement.scrollWidth };
    });
    expect(view.page).toBeLessThanOrEqual(view.viewport);
    expect(view.charts).toHaveLength(2);
    for (const chart of view.charts) {
      expect(chart.scroll).toBeLessThanOrEqual(0);
      expect(chart.right).toBeLessThanOrEqual(view.viewport);
    }
    expect(view.timelineWidth).toBeGreaterThan(200);
    expect(view.labels.map((label) => label.text)).toEqual(expect.arrayContaining(["[1]", "[4]", "0"]));
    for (const label of view.labels) {
      expect(label.size, label.text ?? "").toBeGreaterThanOrEqual(11);
      expect(label.height, label.text ?? "").toBeGreaterThanOrEqual(11);
      expect(label.left, label.text ?? "").toBeGreaterThanOrEqual(0);
      expect(label.right, label.text ?? "").toBeLessThanOrEqual(view.viewport);
    }
    await page.screenshot({ path: join(ARTIFACTS, "failed-charts-375.png"), fullPage: true });
    expect(problems).toEqual([]);
  }, 60_000);

  it("draws one bar per model attempt (the failed ones red) and per tool call, as the journal counts them, up to the run's end", async () => {
    const { page } = await open(files.failed!, 1280);
    const events = readEvents(ws, "failed");
    const bars = await page.evaluate(() => {
      const all = [...document.querySelectorAll("svg.timeline rect.bar")];
      const right = (rect: Element): number => Number(rect.getAttribute("x")) + Number(rect.getAttribute("width"));
      const model = all.filter((rect) => rect.classList.contains("model"));
      return {
        model: model.length,
        failedModel: model.filter((rect) => rect.classList.contains("outcome-FAILED")).length,
        tool: all.filter((rect) => rect.classList.contains("tool")).length,
        failedTool: all.filter((rect) => rect.classList.contains("tool") && rect.classList.contains("outcome-FAILED")).length,
        waits: document.querySelectorAll("svg.timeline rect.wait").length,
        rightmost: [...all].sort((a, b) => right(b) - right(a))[0]?.getAttribute("data-seq"),
        rightmostEnd: Math.max(...all.map(right)),
        plotWidth: Number(document.querySelector("svg.timeline")!.getAttribute("viewBox")!.split(" ")[2]),
      };
    });
    expect(count(events, "LLM_ATTEMPT_FAILED")).toBe(4);
    expect(bars.model).toBe(count(events, "THOUGHT") + count(events, "LLM_ATTEMPT_FAILED"));
    expect(bars.failedModel).toBe(4);
    expect(bars.tool).toBe(count(events, "ACTION_REQUEST"));
    expect(bars.failedTool).toBe(1);
    expect(bars.waits).toBe(3);
    // The call the report was opened for is drawn, at the end of the axis.
    const last = events.find((event) => event.seq === Number(bars.rightmost));
    expect(last).toMatchObject({ type: "LLM_ATTEMPT_FAILED", attempt: 4, retry_in_ms: null });
    expect(bars.rightmostEnd).toBeGreaterThan(bars.plotWidth * 0.9);
  }, 60_000);

  it("shows THOUGHTs by the model's words, tool output as show prints it (folded, the whole one click away), labels apart from text", async () => {
    const { page } = await open(files.failed!, 1280);
    const view = await page.evaluate(() => {
      const thought = document.querySelector("details.type-THOUGHT > summary")!;
      const result = document.querySelector("details.type-ACTION_RESULT")!;
      (result as HTMLDetailsElement).open = true;
      const shown = result.querySelector("pre.output")!.textContent!;
      const whole = result.querySelector("details.whole") as HTMLDetailsElement;
      whole.open = true;
      const type = thought.querySelector(".type")!.getBoundingClientRect();
      const gist = thought.querySelector(".gist")!.getBoundingClientRect();
      return { thought: (thought as HTMLElement).innerText, shown, whole: whole.querySelector("pre")!.textContent!, gap: gist.left - type.right };
    });
    expect(view.thought).toContain("I will read the file and try the failing tool.");
    expect(view.thought).toContain("read_file, fail");
    expect(view.shown).toContain("line 1\tof the file\nline 2\tof the file");
    expect(view.shown).not.toContain("line 60");
    expect(view.whole).toContain("line 60\tof the file");
    expect(view.gap).toBeGreaterThanOrEqual(4);
  }, 60_000);

  it("labels the tokens chart by iteration, values on hover, and shows the cost once", async () => {
    const { page } = await open(files.failed!, 1280);
    const chart = await page.evaluate(() => ({
      labels: [...document.querySelectorAll("svg.tokens + .x-labels .iteration-label")].map((label) => label.textContent),
      titles: [...document.querySelectorAll("svg.tokens rect.token > title")].map((title) => title.textContent),
      facts: [...document.querySelectorAll(".facts")].map((facts) => (facts as HTMLElement).innerText).join(" "),
    }));
    expect(chart.labels).toEqual(["[1]", "[2]", "[3]"]);
    expect(chart.titles).toEqual(["[1] in 100", "[1] out 10", "[2] in 200", "[2] out 20", "[3] in 300", "[3] out 30"]);
    expect(chart.facts.match(/\$/g)).toHaveLength(1);
  }, 60_000);
});

describe("a run that waited for a person", () => {
  it("draws the ask_human wait as a wait, not a tool, and every model call", async () => {
    const { page, problems } = await open(files.asked!, 1280);
    const events = readEvents(ws, "asked");
    const bars = await page.evaluate(() => ({
      model: document.querySelectorAll("svg.timeline rect.bar.model").length,
      tool: document.querySelectorAll("svg.timeline rect.bar.tool").length,
      ask: [...document.querySelectorAll("svg.timeline rect.bar.ask")].map((rect) => ({ fill: getComputedStyle(rect).fill, title: rect.querySelector("title")!.textContent })),
      status: (document.body.firstElementChild as HTMLElement).innerText,
      label: document.querySelector("details.type-HUMAN_INPUT_REQUEST > summary")!.textContent,
    }));
    expect(bars.model).toBe(count(events, "THOUGHT"));
    expect(bars.tool + bars.ask.length).toBe(count(events, "ACTION_REQUEST"));
    expect(bars.ask).toHaveLength(1);
    expect(family(bars.ask[0]!.fill)).toBe("amber");
    expect(bars.ask[0]!.title).toMatch(/ask_human/);
    expect(bars.status).toContain("COMPLETED");
    expect(bars.label).toMatch(/HUMAN_INPUT_REQUEST\s+Which file should I count\?/);
    await page.screenshot({ path: join(ARTIFACTS, "asked-1280.png"), fullPage: true });
    expect(problems).toEqual([]);
  }, 60_000);
});

describe("one colour language", () => {
  it("SUCCESS green, FAILED and ERROR red, waiting amber, model calls and tools distinct (computed styles)", async () => {
    const { page } = await open(files.failed!, 1280);
    const colours = await page.evaluate(() => {
      const probe = (className: string, tag = "span"): { color: string; fill: string } => {
        const element = document.createElementNS(tag === "rect" ? "http://www.w3.org/2000/svg" : "http://www.w3.org/1999/xhtml", tag) as Element;
        element.setAttribute("class", className);
        (tag === "rect" ? document.querySelector("svg.timeline")! : document.body).appendChild(element);
        const style = getComputedStyle(element);
        return { color: style.color, fill: style.fill };
      };
      return {
        COMPLETED: probe("status status-COMPLETED").color,
        SUCCESS: probe("status status-SUCCESS").color,
        FAILED: probe("status status-FAILED").color,
        ERROR: probe("status status-ERROR").color,
        WAITING_FOR_INPUT: probe("status status-WAITING_FOR_INPUT").color,
        INTERRUPTED: probe("status status-INTERRUPTED").color,
        model: probe("bar model outcome-SUCCESS", "rect").fill,
        tool: probe("bar tool outcome-SUCCESS", "rect").fill,
        failedTool: probe("bar tool outcome-FAILED", "rect").fill,
        errorTool: probe("bar tool outcome-ERROR", "rect").fill,
        failedAttempt: probe("bar model outcome-FAILED", "rect").fill,
        wait: probe("wait outcome-waiting", "rect").fill,
        ask: probe("bar ask outcome-answered", "rect").fill,
        failedResult: getComputedStyle(document.querySelector("details.type-ACTION_RESULT .status-FAILED")!).color,
      };
    });
    expect(family(colours.COMPLETED)).toBe("green");
    expect(colours.SUCCESS).toBe(colours.COMPLETED);
    for (const bad of [colours.FAILED, colours.ERROR, colours.failedTool, colours.errorTool, colours.failedAttempt, colours.failedResult]) expect(family(bad)).toBe("red");
    for (const waiting of [colours.WAITING_FOR_INPUT, colours.INTERRUPTED, colours.wait, colours.ask]) expect(family(waiting)).toBe("amber");
    expect(family(colours.model)).toBe("blue");
    expect(family(colours.tool)).toBe("violet");
  }, 60_000);
});

describe("the workspace report", () => {
  it("gives each FAILED run's error and links it to that run's section; a short <h1> with the paths below", async () => {
    const { page, problems } = await open(files.workspace!, 375);
    const view = await page.evaluate(() => {
      const row = document.querySelector('tr.run[data-run="failed"]')!;
      const link = row.querySelector("td.error a") as HTMLAnchorElement;
      const target = document.querySelector(link.getAttribute("href")!) as HTMLElement | null;
      return {
        h1: document.querySelector("h1")!.textContent,
        paths: [...document.querySelectorAll("ul.paths li")].map((item) => item.textContent),
        error: link.textContent,
        section: target?.innerText ?? null,
        completedError: document.querySelector('tr.run[data-run="asked"] td.error')!.textContent,
        scroll: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      };
    });
    expect(view.h1).toBe("Runs");
    expect(view.paths).toEqual([ws]);
    expect(view.error).toMatch(/^LLM_ERROR: The model endpoint .* failed after 4 attempts/);
    expect(view.section).toContain("failed after 4 attempts");
    expect(view.section).toContain("journal.jsonl");
    expect(view.completedError).toBe("");
    expect(view.scroll).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(ARTIFACTS, "workspace-375.png"), fullPage: true });
    expect(problems).toEqual([]);
  }, 60_000);

  for (const width of [375, 1280]) {
    it(`at ${width} px shows a long task whole, on screen`, async () => {
      const { page, problems } = await open(files.workspace!, width);
      const cell = await page.evaluate(() => {
        const task = document.querySelector('tr.run[data-run="long-task"] td.task') as HTMLElement;
        task.scrollIntoView();
        const box = task.getBoundingClientRect();
        return { text: task.textContent, overflow: task.scrollWidth - task.clientWidth, left: box.left, right: box.right, viewport: document.documentElement.clientWidth };
      });
      expect(cell.text).toBe(LONG_TASK);
      expect(cell.overflow).toBeLessThanOrEqual(0);
      expect(cell.left).toBeGreaterThanOrEqual(0);
      expect(cell.right).toBeLessThanOrEqual(cell.viewport);
      await page.screenshot({ path: join(ARTIFACTS, `workspace-task-${width}.png`), fullPage: true });
      expect(problems).toEqual([]);
    }, 60_000);
  }
});

describe("delta report on a terminal", () => {
  it("writes <run-id>.html in the current directory and prints its path; a pipe still gets the HTML", async () => {
    const script = requireBinary("script");
    const here = join(root, "cwd");
    mkdirSync(here, { recursive: true });
    const command = `node ${JSON.stringify(join(REPO, "bin/delta.js"))} report failed -w ${JSON.stringify(ws)}`;
    const onTerminal = await execa(script, ["-qec", command, "/dev/null"], { cwd: here, reject: false });
    expect(onTerminal.exitCode, onTerminal.stderr).toBe(0);
    expect(onTerminal.stdout).toContain(join(here, "failed.html"));
    expect(onTerminal.stdout).not.toContain("<!doctype html>");
    expect(readFileSync(join(here, "failed.html"), "utf8")).toMatch(/^<!doctype html>/);
    const piped = await delta(["report", "failed", "-w", ws], { cwd: here });
    expect(piped.stdout).toMatch(/^<!doctype html>/);
  }, 60_000);
});
