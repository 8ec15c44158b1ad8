// The JSON Schemas editors use: generated from the zod schemas, shipped in schemas/, named on the first line of every example and template, and checking them.
import { Ajv } from "ajv";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { jsonSchemaOf } from "../../src/agent/json-schemas.js";
import { SCHEMA_KINDS, SCHEMA_MODELINE, schemaFileName, type SchemaKind } from "../../src/agent/schema-files.js";
import { REPO, delta, removeDir, tempDir } from "../e2e/harness.js";

/** Every agent.yaml, context.yaml and hooks.yaml of examples/ and templates/, outside run workspaces. */
function packageYamlFiles(dir: string): { file: string; kind: SchemaKind }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "workspaces" || entry.name.startsWith(".") ? [] : packageYamlFiles(path);
    const kind = SCHEMA_KINDS.find((known) => entry.name === `${known}.yaml`);
    return kind ? [{ file: path, kind }] : [];
  });
}

const files = [...packageYamlFiles(join(REPO, "examples")), ...packageYamlFiles(join(REPO, "templates"))];
const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
const validators = Object.fromEntries(SCHEMA_KINDS.map((kind) => [kind, ajv.compile(JSON.parse(readFileSync(join(REPO, "schemas", schemaFileName(kind)), "utf8")))]));

it("finds the agent packages of examples/ and templates/, hooks.yaml included", () => {
  expect(files.length).toBeGreaterThan(20);
  expect(files.filter(({ kind }) => kind === "hooks").map(({ file }) => relative(REPO, file))).toContain(join("examples", "path-guard", "hooks.yaml"));
});

it.each(SCHEMA_KINDS)("schemas/%s.schema.json is what the zod schema generates (the build wrote it from the one source)", (kind) => {
  expect(JSON.parse(readFileSync(join(REPO, "schemas", schemaFileName(kind)), "utf8"))).toEqual(jsonSchemaOf(kind));
});

describe.each(files.map(({ file, kind }) => [relative(REPO, file), kind] as const))("%s", (name, kind) => {
  const file = join(REPO, name);
  const text = readFileSync(file, "utf8");

  it("names its schema on the first line, by a path that leads to the shipped file", () => {
    const match = SCHEMA_MODELINE.exec(text.split("\n")[0]!);
    expect(match, "first line").not.toBeNull();
    expect(resolve(dirname(file), match![1]!)).toBe(join(REPO, "schemas", schemaFileName(kind)));
  });

  it("is valid against that schema", () => {
    const validate = validators[kind]!;
    expect(validate(parse(text)), JSON.stringify(validate.errors)).toBe(true);
  });
});

describe("the schemas catch what an editor should flag", () => {
  it.each([
    ["agent", { name: "x", llm: { modle: "gpt-4o-mini" } }, "must have required property 'model'"],
    ["agent", { name: "x", llm: { model: "m" }, tools: [{ name: "t", exec: "ls", paramters: [] }] }, "must NOT have additional properties"],
    ["agent", { name: "x", llm: { model: "m", temperature: 3 } }, "must be <= 2"],
    ["context", { sources: [{ type: "jornal" }] }, ""],
    ["context", { sources: [] }, "must NOT have fewer than 1 items"],
    ["hooks", { pre_tool_execution: { command: "node guard.mjs" } }, "must be array"],
    ["hooks", { before_tool: { command: ["x"] } }, "must NOT have additional properties"],
  ] as const)("%s: %j is refused", (kind, document, message) => {
    const validate = validators[kind]!;
    expect(validate(document)).toBe(false);
    expect(ajv.errorsText(validate.errors)).toContain(message);
  });

  it("leaves fields with defaults optional, as a user writes them", () => {
    expect(validators.agent!({ name: "x", llm: { model: "m" } })).toBe(true);
    expect(validators.context!({ sources: [{ type: "journal" }] })).toBe(true);
    expect(validators.hooks!({ on_run_end: { command: ["true"] } })).toBe(true);
  });
});

describe("delta schema", () => {
  it.each(SCHEMA_KINDS)("prints the shipped %s schema on stdout", async (kind) => {
    const result = await delta(["schema", kind]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(jsonSchemaOf(kind));
  });

  it("refuses an unknown name with exit 126 and the names it knows", async () => {
    const result = await delta(["schema", "agnet"]);
    expect(result.exitCode).toBe(126);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("Use: delta schema agent | context | hooks");
  });
});

describe("delta init", () => {
  let root: string;
  beforeAll(() => {
    root = tempDir("delta-schema-init-");
  });
  afterAll(() => removeDir(root));

  it("points the new agent's schema lines at the package's schemas, wherever the agent is made", async () => {
    const result = await delta(["init", "deep/er/agent", "-y"], { cwd: root });
    expect(result.exitCode, result.stderr).toBe(0);
    for (const kind of ["agent", "context"] as const) {
      const file = join(root, "deep/er/agent", `${kind}.yaml`);
      const match = SCHEMA_MODELINE.exec(readFileSync(file, "utf8").split("\n")[0]!);
      expect(match).not.toBeNull();
      const target = resolve(dirname(file), match![1]!);
      expect(target).toBe(join(REPO, "schemas", schemaFileName(kind)));
      expect(existsSync(target)).toBe(true);
    }
    expect(parse(readFileSync(join(root, "deep/er/agent/agent.yaml"), "utf8"))).toMatchObject({ name: "agent" });
  });
});
