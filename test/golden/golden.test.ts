// Golden runs: every example's recording and one recorded exchange per native provider, run by the built `delta`; the journal, stream-json, RunResult, `show` and the report's events must match test/golden/expected/ byte for byte (times, pids, paths and the hash chain's hashes normalised, the chain checked by `delta verify`). UPDATE_GOLDEN=1 rewrites the expected files.
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { binDir, EXAMPLES, pathWith } from "../examples/helpers.js";
import { delta, removeDir, REPO, runDir, tempDir, writeAgent } from "../e2e/harness.js";
import { startMockLlm, type MockLlm } from "../support/mock-llm.js";
import { recordedStep } from "../support/recorded.js";

/** Set UPDATE_GOLDEN=1 to write what the runs produce as the new expected files (review the diff before committing it). */
const UPDATE = process.env.UPDATE_GOLDEN === "1";
const EXPECTED = join(REPO, "test/golden/expected");

interface GoldenCase {
  name: string;
  /** The agent directory; for a native provider, written into the test's root. */
  agent: () => string;
  message: string;
  /** `--replay` source, for an example's recording. */
  replay?: string;
  /** The native protocol and the recorded replies it serves, for a provider's case. */
  served?: { protocol: "anthropic" | "openai-responses" | "chat-completions"; steps: string[] };
  env?: () => Record<string, string>;
  /** Files the workspace holds before the run. */
  files?: Record<string, string>;
  /** More `delta run` flags. */
  flags?: string[];
}

let root: string;
let bin: string;

const example = (path: string) => () => join(EXAMPLES, path);
const mapItems = (dir: string) => readFileSync(join(EXAMPLES, dir, "items.txt"), "utf8").split("\n").filter(Boolean);
const nativeAgent = (name: string, llm: string, tools: string) => () =>
  writeAgent(root, { agentYaml: `name: ${name}\nllm:\n  model: test-model\n  max_retries: 0\n${llm}tools:\n${tools}` }, `agent-${name}`);

const CASES: GoldenCase[] = [
  { name: "hello-world", agent: example("hello-world"), replay: "hello-world/recording.jsonl", message: "greet" },
  {
    name: "tool-syntax",
    agent: example("tool-syntax"),
    replay: "tool-syntax/recording.jsonl",
    message: "Save two notes, echo a tricky text, count apples, list the notes, search a text",
  },
  { name: "memory-folding", agent: example("memory-folding"), replay: "memory-folding/recording.jsonl", message: "Research the question, logging every step" },
  {
    name: "path-guard",
    agent: example("path-guard"),
    replay: "path-guard/recording.jsonl",
    message: "Read todo.md and /etc/passwd, then write done.md listing what you did",
    files: { "todo.md": "- water the plants\n- call the bank\n" },
  },
  {
    name: "compaction",
    agent: example("compaction"),
    replay: "compaction/recording.jsonl",
    message: "Which cache is cheaper?",
    env: () => ({ PATH: pathWith(bin), SUMMARISER_REPLAY: join(EXAMPLES, "compaction/summariser/recording.jsonl") }),
  },
  { name: "compaction-summariser", agent: example("compaction/summariser"), replay: "compaction/summariser/recording.jsonl", message: "Summarise the window." },
  {
    name: "sub-agent",
    agent: example("sub-agent"),
    replay: "sub-agent/recording.jsonl",
    message: "How many words are in: Delta engines journal everything",
    env: () => ({ PATH: pathWith(bin), RESEARCHER_REPLAY: join(EXAMPLES, "sub-agent/researcher/recording.jsonl") }),
    // Unboxed, so it runs where bubblewrap is missing (test/hosts/sandbox-examples.test.ts runs it boxed).
    flags: ["--sandbox", "off"],
  },
  { name: "sub-agent-researcher", agent: example("sub-agent/researcher"), replay: "sub-agent/researcher/recording.jsonl", message: "Measure: Delta engines journal everything" },
  {
    name: "mcp-filesystem",
    agent: example("mcp-filesystem"),
    replay: "mcp-filesystem/recording.jsonl",
    message: "Make a picnic checklist in lists/picnic.md and show me what is in lists/",
    env: () => ({ npm_config_offline: "true" }),
  },
  {
    name: "ci",
    agent: example("ci/agent"),
    replay: "ci/recording.jsonl",
    message: "Check the documentation of this repository",
    files: { "README.md": "# repo\n", "docs/guide.md": "# guide\n" },
  },
  {
    name: "skills",
    agent: example("skills"),
    replay: "skills/recording.jsonl",
    message: "Record in the changelog that list-runs has a new --since flag",
  },
  { name: "crash-recovery", agent: example("crash-recovery/agent"), replay: "crash-recovery/agent/recording.jsonl", message: "Process item 0" },
  ...mapItems("map-reduce").map((item, i) => ({
    name: `map-reduce-map-${i}`,
    agent: example("map-reduce/map-agent"),
    replay: `map-reduce/recording/map-${i}.jsonl`,
    message: `Count the words. Text: ${item}`,
  })),
  ...mapItems("slurm").map((item, i) => ({
    name: `slurm-map-${i}`,
    agent: example("map-reduce/map-agent"),
    replay: `slurm/recording/map-${i}.jsonl`,
    message: `Count the words. Text: ${item}`,
  })),
  {
    name: "native-anthropic",
    agent: nativeAgent("anthropic", "  provider: anthropic\n  thinking: { budget_tokens: 4000 }\n  pricing: { input_per_million: 3, cached_input_per_million: 0.3, cache_write_input_per_million: 3.75, output_per_million: 15 }\n", '  - name: weather\n    exec: "echo 40 C in ${location}"\n'),
    served: { protocol: "anthropic", steps: ["anthropic/thinking-signature-tool-use", "anthropic/thinking-followup"] },
    message: "What is the weather in Florence?",
  },
  {
    name: "native-openai-responses",
    agent: nativeAgent("responses", "  provider: openai-responses\n  pricing: { input_per_million: 1.25, cached_input_per_million: 0.125, output_per_million: 10 }\n", '  - name: dice_roll\n    exec: "echo 4"\n'),
    served: { protocol: "openai-responses", steps: [1, 2, 3, 4].map((turn) => `openai-responses/tool-loop-turn-${turn}-cache`) },
    message: "Roll the dice three times.",
  },
  {
    name: "native-openai-chat",
    agent: nativeAgent("chat", "  provider: openai\n", '  - name: add\n    exec: "echo ${a} plus ${b}"\n  - name: multiply\n    exec: "echo ${a} times ${b}"\n'),
    served: { protocol: "chat-completions", steps: ["openai-chat/parallel-tool-calls", "openai-chat/tool-result-followup"] },
    message: "Add and multiply 2 and 3.",
  },
];

beforeAll(() => {
  root = tempDir("delta-golden-");
  bin = binDir(join(root, "launchers"));
});
afterAll(() => removeDir(root));

/** Makes a run's text comparable across machines and moments: the root, times, durations, pids, hosts, versions and random trace ids replaced by markers. */
function normalise(text: string, rootDir: string): string {
  return text
    .split(rootDir)
    .join("<ROOT>")
    .split(REPO)
    .join("<REPO>")
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, "<TIME>")
    // io/ record names carry the time they were written: io/hooks/pre_tool_execution_20260101T000000000Z.json.
    .replace(/(?<=_)\d{8}T\d{9}Z(_\d+)?(?=\.json)/g, "<FILETIME>")
    .replace(/"(duration_ms|latency_ms|pid|pgid|started_at_ms|ended_at_ms|elapsed_ms|time_to_first_token_ms|boot_id|start_ticks|process_start|hostname|host|node_version|engine_version|platform|arch|trace_id)":(\s*)("[^"]*"|[\d.]+)/g, '"$1":$2"<$1>"')
    .replace(/^(trace +)[0-9a-f]{32}$/gm, "$1<trace_id>")
    // Each line's hash covers its times and paths; `delta verify` checks the chain before this hides it.
    .replace(/"hash":"sha256:[0-9a-f]{64}"/g, '"hash":"<hash>"')
    .replace(/127\.0\.0\.1:\d+/g, "127.0.0.1:<PORT>")
    .replace(/\bpid \d+/g, "pid <pid>")
    .replace(/\b(\d+h)?\d+m\d+s\b/g, "<DUR>")
    .replace(/\b\d+(\.\d+)?\s?(ms|s)\b/g, "<DUR>")
    // show pads each line's time to the width of the longest.
    .replace(/^ +\+<DUR>/gm, "+<DUR>");
}

/** The report's list of events: each event's summary line, without its HTML. */
function reportEvents(html: string): string {
  const summaries = [...html.matchAll(/<details class="event [^"]*" id="event-\d+"><summary>([\s\S]*?)<\/summary>/g)].map((match) =>
    match[1]!.replace(/<[^>]+>/g, " ").replace(/&quot;/g, '"').replace(/&amp;/g, "&").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/ +/g, " ").trim(),
  );
  return `${summaries.join("\n")}\n`;
}

async function produce(golden: GoldenCase): Promise<Record<string, string>> {
  const ws = join(root, `ws-${golden.name}`);
  mkdirSync(ws, { recursive: true });
  for (const [file, content] of Object.entries(golden.files ?? {})) {
    mkdirSync(join(ws, file, ".."), { recursive: true });
    writeFileSync(join(ws, file), content);
  }
  let server: MockLlm | undefined;
  const env: Record<string, string> = { ...golden.env?.() };
  if (golden.served) {
    server = await startMockLlm(golden.served.steps.map((step) => recordedStep(step)), { protocol: golden.served.protocol });
    Object.assign(env, { DELTA_API_KEY: "sk-golden-0123456789abcdef", DELTA_BASE_URL: server.baseUrl, DELTA_RETRY_BASE_MS: "1" });
  }
  const resultFile = join(root, `${golden.name}.result.json`);
  const args = ["run", "--agent", golden.agent(), "-w", ws, "--run-id", golden.name, "-m", golden.message, "--format", "stream-json", "-o", resultFile];
  if (golden.replay) args.push("--replay", join(EXAMPLES, golden.replay));
  args.push(...(golden.flags ?? []));
  try {
    const run = await delta(args, { env, timeoutMs: 240_000 });
    expect(run.stderr).not.toMatch(/Internal error/);
    const show = await delta(["show", golden.name, "-w", ws], { timeoutMs: 120_000 });
    expect(show.exitCode, show.stderr).toBe(0);
    const report = await delta(["report", golden.name, "-w", ws], { timeoutMs: 120_000 });
    expect(report.exitCode, report.stderr).toBe(0);
    const verified = await delta(["verify", golden.name, "-w", ws], { timeoutMs: 120_000 });
    expect(verified.exitCode, verified.stdout).toBe(0);
    const files = {
      "journal.jsonl": readFileSync(join(runDir(ws, golden.name), "journal.jsonl"), "utf8"),
      "stream.jsonl": run.stdout,
      "result.json": `${JSON.stringify(JSON.parse(readFileSync(resultFile, "utf8")), null, 2)}\n`,
      "show.txt": show.stdout,
      "report-events.txt": reportEvents(report.stdout),
      "exit-code.txt": `${run.exitCode}\n`,
    };
    return Object.fromEntries(Object.entries(files).map(([name, text]) => [name, normalise(text, root)]));
  } finally {
    await server?.close();
  }
}

describe.concurrent("golden runs", () => {
  it("has a golden case for every recording the examples ship", () => {
    const shipped = (dir: string): string[] =>
      readdirSync(join(EXAMPLES, dir), { withFileTypes: true }).flatMap((entry) => {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) return entry.name === "workspaces" ? [] : shipped(path);
        return entry.name.endsWith(".jsonl") && (entry.name === "recording.jsonl" || dir.endsWith("recording")) ? [path] : [];
      });
    // map-reduce/recording/reduce.jsonl totals with jq, which the unit tests do not assume: its golden run is in test/hosts/.
    expect(CASES.flatMap((golden) => golden.replay ?? []).sort()).toEqual(shipped("").filter((path) => path !== "map-reduce/recording/reduce.jsonl").sort());
  });

  for (const golden of CASES) {
    it(golden.name, { timeout: 480_000 }, async () => {
      const produced = await produce(golden);
      const dir = join(EXPECTED, golden.name);
      if (UPDATE) {
        mkdirSync(dir, { recursive: true });
        for (const [file, text] of Object.entries(produced)) writeFileSync(join(dir, file), text);
        return;
      }
      expect(existsSync(dir), `no golden files for ${golden.name}: run UPDATE_GOLDEN=1 npx vitest run test/golden/golden.test.ts`).toBe(true);
      for (const [file, text] of Object.entries(produced)) {
        expect(text, `${golden.name}/${file} differs from test/golden/expected (UPDATE_GOLDEN=1 rewrites it when the change is meant)`).toBe(readFileSync(join(dir, file), "utf8"));
      }
    });
  }
});
