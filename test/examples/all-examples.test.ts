// Every agent under examples/ loads cleanly (no error, no warning) and every example has a README.
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { delta, setUpE2e } from "../e2e/harness.js";
import { EXAMPLES, binDir, pathWith } from "./helpers.js";

const { root } = setUpE2e("delta-all-examples-");

/** Directories holding an agent.yaml, outside run workspaces. */
function agentDirs(dir: string): string[] {
  const found = existsSync(join(dir, "agent.yaml")) ? [dir] : [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && entry.name !== "workspaces" && !entry.name.startsWith(".")) found.push(...agentDirs(join(dir, entry.name)));
  }
  return found;
}

const examples = readdirSync(EXAMPLES, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
const agents = agentDirs(EXAMPLES);

it("finds the examples", () => {
  expect(examples).toEqual(expect.arrayContaining(["hello-world", "tool-syntax", "memory-folding", "sub-agent", "interactive-shell"]));
  expect(agents.map((dir) => relative(EXAMPLES, dir))).toContain(join("sub-agent", "researcher"));
});

it.each(examples)("examples/%s has a README", (name) => {
  expect(existsSync(join(EXAMPLES, name, "README.md"))).toBe(true);
});

describe.concurrent("every example agent loads", () => {
  // As installed: delta and delta-sessions on PATH (the interactive-shell example's tools are delta-sessions).
  const installed: Record<string, string> = {};
  beforeAll(() => {
    installed.PATH = pathWith(binDir(root));
  });
  for (const dir of agents) {
    it(relative(EXAMPLES, dir), async () => {
      const expand = await delta(["tool", "expand", dir], { env: installed });
      expect(expand.exitCode, expand.stderr).toBe(0);
      expect(expand.stderr).toBe("");
      // A summariser needs no tool: its list is empty.
      expect(expand.stdout).toMatch(/^tools:(\n {2}- name: | \[\]\n$)/);
    });
  }
});

// A recording is in the form the engine exports from a run's io/invocations/, every field spelled out.
const recordings = agents.filter((dir) => existsSync(join(dir, "recording.jsonl")));
it("has a recording beside every agent the examples replay", () => {
  expect(recordings.map((dir) => relative(EXAMPLES, dir)).sort()).toEqual([
    "compaction", "compaction/summariser", "crash-recovery/agent", "hello-world", "mcp-filesystem", "memory-folding", "path-guard", "skills", "sub-agent", "sub-agent/researcher", "tool-syntax",
  ]);
});

const mapReduceRecordings = readdirSync(join(EXAMPLES, "map-reduce", "recording")).map((name) => join("map-reduce", "recording", name));
it("has a map-reduce recording per line of its items.txt, and one for the reduce", () => {
  const items = readFileSync(join(EXAMPLES, "map-reduce", "items.txt"), "utf8").split("\n").filter(Boolean);
  expect(mapReduceRecordings.map((file) => relative(join("map-reduce", "recording"), file)).sort()).toEqual([...items.map((_, i) => `map-${i}.jsonl`), "reduce.jsonl"]);
});

const slurmRecordings = readdirSync(join(EXAMPLES, "slurm", "recording")).map((name) => join("slurm", "recording", name));
it("has a slurm recording per line of its items.txt", () => {
  const items = readFileSync(join(EXAMPLES, "slurm", "items.txt"), "utf8").split("\n").filter(Boolean);
  expect(slurmRecordings.map((file) => relative(join("slurm", "recording"), file)).sort()).toEqual(items.map((_, i) => `map-${i}.jsonl`));
});

it.each([...recordings.map((dir) => join(relative(EXAMPLES, dir), "recording.jsonl")), ...mapReduceRecordings, ...slurmRecordings])("examples/%s has the exported replies format", (name) => {
  const lines = readFileSync(join(EXAMPLES, name), "utf8").split("\n").filter((line) => line !== "");
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) {
    const recorded = JSON.parse(line) as Record<string, unknown>;
    expect(Object.keys(recorded)).toEqual(["content", "tool_calls", "usage", "model", "finish_reason"]);
    for (const call of recorded.tool_calls as Record<string, unknown>[]) {
      expect(Object.keys(call)).toEqual(["id", "name", "arguments"]);
      expect(typeof call.arguments).toBe("string");
    }
  }
});
