// Structured answers end to end: output_schema and --output-schema against loopback model servers of each protocol — the native field asked for, a valid answer parsed, an invalid one re-asked once then OUTPUT_INVALID and resumable, refusals at load.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EventOf, JournalEvent } from "../../src/journal/events.js";
import { messagesOf, reply, type MockLlm, type Protocol, type Step } from "../support/mock-llm.js";
import { CRASH_TRACE, delta, modelEnv, readEvents, writeAgent, setUpE2e } from "./harness.js";

type Json = Record<string, unknown>;

const e2e = setUpE2e("delta-output-schema-");
const root = e2e.root;
let server: MockLlm | undefined;

/** A strict-ready schema: nested objects, enums, additionalProperties: false everywhere, every property required. */
const VERDICT_SCHEMA = `output_schema:
  type: object
  additionalProperties: false
  required: [verdict, findings]
  properties:
    verdict: { enum: [pass, fail] }
    findings:
      type: array
      items:
        type: object
        additionalProperties: false
        required: [file, severity]
        properties:
          file: { type: string }
          severity: { enum: [low, high] }
`;
const TOOLS = 'tools:\n  - name: echo\n    exec: "echo ${text}"\n';
const agentYaml = (llm = "", schema = VERDICT_SCHEMA, model = "gpt-4o-mini") => `name: reviewer\nllm:\n  model: ${model}\n  max_retries: 0\n${llm}${TOOLS}${schema}`;
const VALID = { verdict: "fail", findings: [{ file: "a.ts", severity: "high" }] };

async function serve(steps: Step[], protocol: Protocol = "chat-completions"): Promise<MockLlm> {
  server = await e2e.serve(steps, { protocol });
  return server;
}

async function runAgent(name: string, yaml: string, args: string[] = ["--format", "json"], files: Record<string, string> = {}) {
  const agent = writeAgent(root, { agentYaml: yaml, files }, `agent-${name}`);
  const ws = join(root, `ws-${name}`);
  const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", name, "-m", "review", ...args], { env: modelEnv(server?.baseUrl ?? "http://127.0.0.1:9/v1") });
  expect(result.stderr).not.toMatch(CRASH_TRACE);
  return { result, ws, agent };
}

const engineMessages = (events: JournalEvent[]) => events.filter((event): event is EventOf<"USER_MESSAGE"> => event.type === "USER_MESSAGE" && event.source === "engine");

describe("the native field each protocol is asked with", () => {
  it("Chat Completions: response_format json_schema, strict, beside the tools, on every request", async () => {
    await serve([reply.toolCalls([{ name: "echo", arguments: { text: "hi" } }]), reply.text(JSON.stringify(VALID))]);
    const { result } = await runAgent("chat-native", agentYaml());
    expect(result.exitCode, result.stderr).toBe(0);
    for (const request of server!.requests) {
      const body = request.body as Json;
      expect(body.response_format).toEqual({ type: "json_schema", json_schema: { name: "final_answer", strict: true, schema: expect.objectContaining({ type: "object", required: ["verdict", "findings"] }) } });
      expect(body.tools).toHaveLength(2);
    }
    expect(result.stderr).not.toContain("[warning]");
  });

  it("Responses: text.format json_schema, strict", async () => {
    await serve([reply.text(JSON.stringify(VALID))], "openai-responses");
    const { result } = await runAgent("responses-native", agentYaml("  provider: openai-responses\n"));
    expect(result.exitCode, result.stderr).toBe(0);
    const body = server!.requests[0]!.body as Json;
    expect(body.text).toEqual({ format: { type: "json_schema", name: "final_answer", strict: true, schema: expect.objectContaining({ type: "object" }) } });
    expect(JSON.parse(result.stdout)).toMatchObject({ status: "COMPLETED", result: VALID });
  });

  it("Anthropic: output_config.format for a model with structured outputs; none, with a warning, for one without", async () => {
    await serve([reply.text(JSON.stringify(VALID)), reply.text(JSON.stringify(VALID))], "anthropic");
    const modern = await runAgent("anthropic-native", agentYaml("  provider: anthropic\n", VERDICT_SCHEMA, "claude-sonnet-4-5-20250929"));
    expect(modern.result.exitCode, modern.result.stderr).toBe(0);
    expect((server!.requests[0]!.body as Json).output_config).toEqual({ format: { type: "json_schema", schema: expect.objectContaining({ type: "object" }) } });
    expect(modern.result.stderr).not.toContain("[warning]");

    const older = await runAgent("anthropic-older", agentYaml("  provider: anthropic\n", VERDICT_SCHEMA, "claude-sonnet-4-20250514"));
    expect(older.result.exitCode, older.result.stderr).toBe(0);
    expect(server!.requests[1]!.body).not.toHaveProperty("output_config");
    expect(older.result.stderr).toContain("[warning] output_schema: model claude-sonnet-4-20250514 has no structured outputs");
    expect(JSON.parse(older.result.stdout)).toMatchObject({ status: "COMPLETED", result: VALID });
  });

  it("a schema OpenAI's strict mode refuses is sent with strict: false, with a warning naming the rule", async () => {
    await serve([reply.text('{"summary": "ok"}')]);
    const loose = "output_schema:\n  type: object\n  properties:\n    summary: { type: string }\n    notes: { type: string }\n  required: [summary]\n";
    const { result } = await runAgent("non-strict", agentYaml("", loose));
    expect(result.exitCode, result.stderr).toBe(0);
    expect((server!.requests[0]!.body as { response_format: { json_schema: Json } }).response_format.json_schema.strict).toBe(false);
    expect(result.stderr).toContain("[warning] output_schema: OpenAI's strict mode needs additionalProperties: false on every object (# does not set it)");
  });
});

describe("the final answer", () => {
  it("a valid answer is the RunResult's parsed result, with the model's text as result_text", async () => {
    const text = `  ${JSON.stringify(VALID, null, 2)}\n`;
    await serve([reply.text(text)]);
    const { result, ws } = await runAgent("valid", agentYaml());
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ schema_version: "2.0", status: "COMPLETED", result: VALID, result_text: text });
    expect(engineMessages(readEvents(ws, "valid"))).toEqual([]);
  });

  it("--format raw and -o print the value as compact JSON on one line", async () => {
    await serve([reply.text(JSON.stringify(VALID, null, 2))]);
    const out = join(root, "raw-result.json");
    const { result } = await runAgent("raw", agentYaml(), ["--format", "raw", "-o", out]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toBe(`${JSON.stringify(VALID)}\n`);
    expect(readFileSync(out, "utf8")).toBe(`${JSON.stringify(VALID)}\n`);
  });

  it("an answer that does not match is re-asked once (an engine message, shown in stream-json), then fails OUTPUT_INVALID, exit 1; continue without -m re-asks once more", async () => {
    const extra = { verdict: "fail", findings: [{ file: "a.ts", severity: "high", line: 3 }] };
    await serve([reply.text("Here you go: " + JSON.stringify(VALID)), reply.text(JSON.stringify(extra)), reply.text("```\n" + JSON.stringify(VALID) + "\n```"), reply.text(JSON.stringify(VALID))]);
    const { result, ws } = await runAgent("invalid", agentYaml(), ["--format", "stream-json"]);
    expect(result.exitCode).toBe(1);
    const lines = result.stdout.trim().split("\n").map((line) => JSON.parse(line) as Json);
    const reasks = lines.filter((line) => line.type === "USER_MESSAGE" && line.source === "engine");
    expect(reasks).toHaveLength(1);
    expect(String(reasks[0]!.content)).toContain("the answer is not JSON");
    expect(lines.at(-1)).toMatchObject({ status: "FAILED", error: { type: "OUTPUT_INVALID" } });
    expect(String((lines.at(-1)!.error as Json).message)).toContain("/findings/0: must NOT have additional properties ('line')");
    expect(result.stderr).toContain("delta continue --run-id invalid");
    // The model saw the re-ask, with its problems and the schema, as the last message of the second request.
    const second = messagesOf(server!.requests[1]!);
    expect(second.at(-1)).toMatchObject({ role: "user" });
    expect(second.at(-1)!.content).toContain('"additionalProperties":false');
    expect(server!.requests).toHaveLength(2);

    // continue without -m: the engine re-asks once more (about the last answer), and a fence that is not ```json is no exemption.
    const again = await delta(["continue", "--run-id", "invalid", "-w", ws, "--format", "json"], { env: modelEnv(server!.baseUrl) });
    expect(again.exitCode).toBe(1);
    expect(JSON.parse(again.stdout)).toMatchObject({ status: "FAILED", error: { type: "OUTPUT_INVALID" } });
    expect(messagesOf(server!.requests[2]!).at(-1)!.content).toContain("/findings/0: must NOT have additional properties ('line')");
    expect(engineMessages(readEvents(ws, "invalid"))).toHaveLength(2);

    const last = await delta(["continue", "--run-id", "invalid", "-w", ws, "--format", "json"], { env: modelEnv(server!.baseUrl) });
    expect(last.exitCode, last.stderr).toBe(0);
    expect(JSON.parse(last.stdout)).toMatchObject({ status: "COMPLETED", result: VALID });
    expect(engineMessages(readEvents(ws, "invalid"))).toHaveLength(3);
  });

  it("a run keeps the schema it started with: --output-schema for one run is held by continue too", async () => {
    await serve([reply.text('{"answer": 42}'), reply.text('{"answer": "forty-two"}'), reply.text('{"answer": "42"}'), reply.text('{"answer": 42}')]);
    const schemaFile = join(root, "answer.schema.json");
    writeFileSync(schemaFile, JSON.stringify({ type: "object", properties: { answer: { type: "string" } }, required: ["answer"], additionalProperties: false }));
    const { result, ws } = await runAgent("cli-schema", `name: cli\nllm:\n  model: gpt-4o-mini\n${TOOLS}`, ["--format", "json", "--output-schema", schemaFile]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ result: { answer: "forty-two" } });
    expect((server!.requests[0]!.body as { response_format: { json_schema: { schema: Json } } }).response_format.json_schema.schema).toMatchObject({ properties: { answer: { type: "string" } } });

    const extended = await delta(["continue", "--run-id", "cli-schema", "-w", ws, "-m", "again", "--format", "json"], { env: modelEnv(server!.baseUrl) });
    expect(extended.exitCode, extended.stderr).toBe(0);
    expect(JSON.parse(extended.stdout)).toMatchObject({ result: { answer: "42" } });
    expect(server!.requests[2]!.body).toHaveProperty("response_format");
  });
});

it("loads the validator (dist/delta-ajv.cjs) only in a run with an output schema", async () => {
  const probe = join(root, "probe.cjs");
  const report = join(root, "bundles-read.json");
  // At exit: the bundles of dist/ the process read (requireBundle reads each one it loads).
  writeFileSync(
    probe,
    `const fs = require("node:fs"); const read = fs.readFileSync; const seen = new Set();
     fs.readFileSync = function (file, ...rest) { if (typeof file === "string" && file.endsWith(".cjs")) seen.add(require("node:path").basename(file)); return read.call(this, file, ...rest); };
     process.on("exit", () => fs.writeFileSync(${JSON.stringify(report)}, JSON.stringify([...seen])));\n`,
  );
  const bundlesRead = async (name: string, schema: string): Promise<string[]> => {
    await serve([reply.text(JSON.stringify(VALID))]);
    const agent = writeAgent(root, { agentYaml: agentYaml("", schema) }, `agent-${name}`);
    const run = await delta(["run", "--agent", agent, "-w", join(root, `ws-${name}`), "-m", "go"], { env: modelEnv(server!.baseUrl, { NODE_OPTIONS: `--require ${probe}` }) });
    expect(run.exitCode, run.stderr).toBe(0);
    await server!.close();
    server = undefined;
    return JSON.parse(readFileSync(report, "utf8")) as string[];
  };
  const plain = await bundlesRead("no-schema", "");
  expect(plain).toContain("delta.cjs");
  // Every run checks its appends with the code the build generated for them, not with ajv's compiler.
  expect(plain).toContain("delta-journal-checks.cjs");
  expect(plain).not.toContain("delta-ajv.cjs");
  expect(await bundlesRead("with-schema", VERDICT_SCHEMA)).toContain("delta-ajv.cjs");
});

describe("refused at load (126), naming the file and the field", () => {
  it("an invalid schema", async () => {
    const { result, ws } = await runAgent("bad-schema", agentYaml("", "output_schema:\n  type: objekt\n"));
    expect(result.exitCode).toBe(126);
    expect(result.stderr).toContain("agent.yaml: output_schema: not a valid JSON Schema (2020-12)");
    expect(result.stderr).toContain('/type: must be equal to one of the allowed values ("array", "boolean", "integer", "null", "number", "object", "string")');
    expect(() => readEvents(ws, "bad-schema")).toThrow();
  });

  it("a misspelt keyword", async () => {
    const { result } = await runAgent("typo-schema", agentYaml("", "output_schema:\n  type: object\n  requried: [a]\n"));
    expect(result.exitCode).toBe(126);
    expect(result.stderr).toContain('agent.yaml: output_schema: not a valid JSON Schema (2020-12): strict mode: unknown keyword: "requried"');
  });

  it("a $ref outside the agent home; one inside is followed", async () => {
    writeFileSync(join(root, "outside.json"), JSON.stringify({ type: "string" }));
    const outside = await runAgent("ref-outside", agentYaml("", "output_schema:\n  type: object\n  properties:\n    name: { $ref: ../outside.json }\n"));
    expect(outside.result.exitCode).toBe(126);
    expect(outside.result.stderr).toMatch(/agent\.yaml: output_schema\.properties\.name\.\$ref: \$ref '\.\.\/outside\.json' resolves to .*outside\.json, outside the agent directory/);

    const url = await runAgent("ref-url", agentYaml("", "output_schema:\n  $ref: https://example.com/verdict.json\n"));
    expect(url.result.exitCode).toBe(126);
    expect(url.result.stderr).toContain("agent.yaml: output_schema.$ref: $ref 'https://example.com/verdict.json' points outside the agent directory");

    await serve([reply.text('{"verdict": "maybe"}'), reply.text('{"verdict": "pass"}')]);
    const files = { "schemas/answer.json": JSON.stringify({ type: "object", additionalProperties: false, required: ["verdict"], properties: { verdict: { $ref: "verdict.json" } } }), "schemas/verdict.json": JSON.stringify({ enum: ["pass", "fail"] }) };
    const inside = await runAgent("ref-inside", agentYaml("", "output_schema: schemas/answer.json\n"), ["--format", "json"], files);
    expect(inside.result.exitCode, inside.result.stderr).toBe(0);
    expect(JSON.parse(inside.result.stdout)).toMatchObject({ result: { verdict: "pass" } });
    const sent = (server!.requests[0]!.body as { response_format: { json_schema: { schema: Json } } }).response_format.json_schema.schema;
    expect(sent).toEqual({ type: "object", additionalProperties: false, required: ["verdict"], properties: { verdict: { $ref: "#/$defs/file_schemas_verdict.json" } }, $defs: { "file_schemas_verdict.json": { enum: ["pass", "fail"] } } });
  });

  it("an --output-schema file that is missing or not a schema", async () => {
    const missing = await runAgent("cli-missing", agentYaml("", ""), ["--output-schema", join(root, "nope.json")]);
    expect(missing.result.exitCode).toBe(126);
    expect(missing.result.stderr).toContain(`--output-schema: ${join(root, "nope.json")} not found`);
    const bad = join(root, "bad.schema.json");
    writeFileSync(bad, JSON.stringify({ type: "object", properties: { a: { minLength: "two" } } }));
    const invalid = await runAgent("cli-invalid", agentYaml("", ""), ["--output-schema", bad]);
    expect(invalid.result.exitCode).toBe(126);
    expect(invalid.result.stderr).toContain(`${bad}: not a valid JSON Schema (2020-12): /properties/a/minLength: must be integer`);
  });
});
