// End to end: an output schema cannot hang or exhaust the engine — patterns run in linear time, files are bounded and opened safely, a $ref loop is refused by name.
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reply, startMockLlm } from "../support/mock-llm.js";
import { CRASH_TRACE, delta, modelEnv, setUpE2e, writeAgent } from "./harness.js";

const { root } = setUpE2e("delta-schema-bounds-");

const agentYaml = (schema: string): string => `name: bounded\nllm:\n  model: gpt-4o-mini\n  max_retries: 0\noutput_schema:${schema}`;

async function run(name: string, yaml: string, files: Record<string, string> = {}, prepare: (agent: string) => void = () => {}, answer = "irrelevant") {
  const server = await startMockLlm(() => reply.text(answer));
  try {
    const agent = writeAgent(root, { agentYaml: yaml, files }, `agent-${name}`);
    prepare(agent);
    // The ceiling is generous: what is checked is that the process ended, and why.
    const result = await delta(["run", "--agent", agent, "-w", join(root, `ws-${name}`), "--run-id", name, "-m", "answer", "--format", "json"], { env: modelEnv(server.baseUrl), timeoutMs: 120_000 });
    expect(result.stderr).not.toMatch(CRASH_TRACE);
    return { ...result, requests: server.requests.length };
  } finally {
    await server.close();
  }
}

describe("an output schema's patterns", () => {
  it("run in linear time: a catastrophic pattern against a 41-character answer is checked at once, and the answer is OUTPUT_INVALID", async () => {
    // The answer is a JSON string of 41 characters: a backtracking engine would take hours on it.
    const answer = JSON.stringify(`${"a".repeat(40)}!`);
    const result = await run("redos", agentYaml("\n  type: string\n  pattern: '^([a-zA-Z0-9]+)*@example\\.com$'\n"), {}, () => {}, answer);
    expect(result.exitCode, result.stderr).toBe(1);
    const outcome = JSON.parse(result.stdout) as { status: string; error: { type: string; message: string } };
    expect(outcome).toMatchObject({ status: "FAILED", error: { type: "OUTPUT_INVALID" } });
    expect(outcome.error.message).toContain('must match pattern "^([a-zA-Z0-9]+)*@example\\.com$"');
    // Asked once, re-asked once: both answers were checked.
    expect(result.requests).toBe(2);
  }, 150_000);

  it("that need backtracking (lookahead, backreferences) are refused at load (126), naming the field and what to write instead", async () => {
    const result = await run("lookahead", agentYaml("\n  type: string\n  pattern: '^(?=.*[0-9]).+$'\n"));
    expect(result.exitCode).toBe(126);
    expect(result.stderr).toContain("agent.yaml: output_schema: not a valid JSON Schema (2020-12): pattern \"^(?=.*[0-9]).+$\" cannot be matched in linear time");
    expect(result.stderr).toContain("lookahead (?=…) (?!…), lookbehind (?<=…) (?<!…) and backreferences");
    expect(result.requests).toBe(0);
  }, 60_000);
});

describe("an output schema file", () => {
  it("larger than its bound is refused at once (126), naming the file and the bound", async () => {
    const properties = Object.fromEntries(Array.from({ length: 10_000 }, (_, index) => [`field_${index}`, { type: "string", description: "x".repeat(10) }]));
    const big = JSON.stringify({ type: "object", properties });
    expect(big.length).toBeGreaterThan(512 << 10);
    const result = await run("big", agentYaml(" schemas/big.json\n"), { "schemas/big.json": big });
    expect(result.exitCode).toBe(126);
    expect(result.stderr).toContain("agent.yaml: output_schema: ");
    expect(result.stderr).toContain("/schemas/big.json is larger than 512.0 KiB (524288 bytes), the bound of an output schema file; it is refused: make it smaller");
  }, 60_000);

  it("that is a FIFO is refused as a FIFO (126), never waited on, never called \"not found\"", async () => {
    const result = await run("fifo", agentYaml(" schemas/answer.json\n"), {}, (agent) => {
      mkdirSync(join(agent, "schemas"));
      execFileSync("mkfifo", [join(agent, "schemas", "answer.json")]);
    });
    expect(result.exitCode).toBe(126);
    expect(result.stderr).toContain("is a FIFO (named pipe), which would wait for a writer, not a regular file");
    expect(result.stderr).not.toContain("not found");
  }, 60_000);

  it("with a $ref loop that never reaches a part of the answer is refused (126), naming the loop; a recursive tree schema still loads", async () => {
    const loop = { $defs: { a: { $ref: "#/$defs/b" }, b: { allOf: [{ $ref: "#/$defs/a" }] } }, $ref: "#/$defs/a" };
    const result = await run("loop", agentYaml(" schemas/loop.json\n"), { "schemas/loop.json": JSON.stringify(loop) });
    expect(result.exitCode).toBe(126);
    expect(result.stderr).toContain("schemas/loop.json: $ref loop #/$defs/a → #/$defs/b → #/$defs/b/allOf/0 → #/$defs/a: each step checks the same value again");
    expect(result.stderr).not.toContain("Maximum call stack");
    const tree = { type: "object", properties: { children: { type: "array", items: { $ref: "#" } } } };
    const fine = await run("tree", agentYaml(" schemas/tree.json\n"), { "schemas/tree.json": JSON.stringify(tree) }, () => {}, JSON.stringify({ children: [{ children: [] }] }));
    expect(fine.exitCode, fine.stderr).toBe(0);
  }, 60_000);
});

