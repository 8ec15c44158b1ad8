// Loading an output schema: drafts, $refs into files of the agent home made self-contained, and refusals that name the file and the field.
import { mkdir, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadAgent } from "../../src/agent/load.js";
import { loadOutputSchemaFile } from "../../src/agent/output-schema.js";
import { MINIMAL_AGENT_YAML, makeAgent, tempDir } from "./helpers.js";

const withSchema = (schema: string) => `${MINIMAL_AGENT_YAML}output_schema:${schema}`;

describe("output_schema", () => {
  it("an inline schema is compiled: its validator names each problem", async () => {
    const home = await makeAgent({ "agent.yaml": withSchema("\n  type: object\n  required: [ok]\n  properties:\n    ok: { type: boolean }\n") });
    const agent = await loadAgent(home);
    expect(agent.output?.schema).toMatchObject({ source: `${home}/agent.yaml: output_schema`, draft: "2020-12" });
    expect(agent.output?.validate({ ok: true })).toEqual([]);
    expect(agent.output?.validate({})).toEqual(["(the answer): must have required property 'ok'"]);
  });

  it("draft-07 by $schema: files it refers to go under definitions, their own pointers rewritten, a shared file once", async () => {
    const home = await makeAgent({
      "agent.yaml": withSchema(" schemas/answer.json\n"),
      "schemas/answer.json": JSON.stringify({ $schema: "http://json-schema.org/draft-07/schema#", type: "object", properties: { a: { $ref: "parts/item.yaml#/definitions/item" }, b: { $ref: "./parts/item.yaml" } } }),
      "schemas/parts/item.yaml": "$schema: http://json-schema.org/draft-07/schema#\ndefinitions:\n  item: { type: integer }\n$ref: '#/definitions/item'\n",
    });
    const agent = await loadAgent(home);
    expect(agent.output?.schema.draft).toBe("draft-07");
    expect(agent.output?.schema.source).toBe("schemas/answer.json");
    expect(agent.output?.schema.schema).toEqual({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { a: { $ref: "#/definitions/file_schemas_parts_item.yaml/definitions/item" }, b: { $ref: "#/definitions/file_schemas_parts_item.yaml" } },
      definitions: { "file_schemas_parts_item.yaml": { definitions: { item: { type: "integer" } }, $ref: "#/definitions/file_schemas_parts_item.yaml/definitions/item" } },
    });
    expect(agent.output?.validate({ a: 1, b: 2 })).toEqual([]);
    expect(agent.output?.validate({ a: 1, b: "two" })).toEqual(["/b: must be integer"]);
  });

  it("files that refer to each other in a circle load once each", async () => {
    const home = await makeAgent({
      "agent.yaml": withSchema(" tree.json\n"),
      "tree.json": JSON.stringify({ type: "object", properties: { children: { type: "array", items: { $ref: "tree.json" } } } }),
    });
    const agent = await loadAgent(home);
    expect(agent.output?.validate({ children: [{ children: [] }] })).toEqual([]);
    expect(agent.output?.validate({ children: [{ children: 3 }] })).toEqual(["/children/0/children: must be array"]);
  });

  it.each([
    ["a schema file outside the agent home", withSchema(" ../elsewhere.json\n"), "agent.yaml: output_schema: '../elsewhere.json' resolves to"],
    ["a missing schema file", withSchema(" missing.json\n"), "agent.yaml: output_schema: 'missing.json' not found"],
    ["an unknown draft", withSchema("\n  $schema: http://json-schema.org/draft-04/schema#\n  type: object\n"), 'agent.yaml: output_schema: $schema: "http://json-schema.org/draft-04/schema#" is not a draft the engine reads'],
    ["an $id inside the schema", withSchema("\n  type: object\n  properties:\n    a: { $id: 'https://x/a', type: string }\n"), "agent.yaml: output_schema.properties.a.$id: $id is not supported"],
    ["an anchor reference", withSchema("\n  $ref: '#item'\n"), "agent.yaml: output_schema.$ref: $ref '#item': only \"#/…\" JSON pointers"],
    ["an absolute path", withSchema("\n  $ref: /etc/schema.json\n"), "agent.yaml: output_schema.$ref: $ref '/etc/schema.json' points outside the agent directory"],
    ["a pointer to nothing", withSchema("\n  $ref: '#/$defs/missing'\n"), "agent.yaml: output_schema: not a valid JSON Schema (2020-12): can't resolve reference #/$defs/missing"],
    ["a list", withSchema(" [1, 2]\n"), "agent.yaml: output_schema: output_schema is a JSON Schema written as a mapping"],
  ])("refuses %s, naming the file and the field", async (_name, yaml, message) => {
    const home = await makeAgent({ "agent.yaml": yaml });
    const elsewhere = path.join(path.dirname(home), "elsewhere.json");
    await writeFile(elsewhere, "{}");
    try {
      await expect(loadAgent(home)).rejects.toThrow(message);
    } finally {
      await rm(elsewhere, { force: true });
    }
  });

  it("refuses a $ref in a schema file that reaches outside the home through a symlink, naming that file and field", async () => {
    const outside = await tempDir("delta-outside-");
    await writeFile(path.join(outside, "secret.json"), '{"type": "string"}');
    const home = await makeAgent({ "agent.yaml": withSchema(" schemas/answer.json\n"), "schemas/answer.json": JSON.stringify({ type: "object", properties: { s: { $ref: "link/secret.json" } } }) });
    await symlink(outside, path.join(home, "schemas", "link"));
    await expect(loadAgent(home)).rejects.toThrow(/^schemas\/answer\.json: properties\.s\.\$ref: \$ref 'link\/secret\.json' resolves to .*secret\.json, outside the agent directory/);
  });

  it("--output-schema may live anywhere, but what it refers to must be inside the agent home", async () => {
    const home = await makeAgent();
    const dir = await tempDir("delta-cli-schema-");
    await mkdir(path.join(dir, "sub"));
    await writeFile(path.join(dir, "sub", "part.json"), '{"type": "string"}');
    await writeFile(path.join(dir, "ok.json"), '{"type": "object", "properties": {"a": {"type": "string"}}}');
    await writeFile(path.join(dir, "refers.json"), '{"type": "object", "properties": {"a": {"$ref": "sub/part.json"}}}');
    expect((await loadOutputSchemaFile(path.join(dir, "ok.json"), home)).validate({ a: 1 })).toEqual(["/a: must be string"]);
    await expect(loadOutputSchemaFile(path.join(dir, "refers.json"), home)).rejects.toThrow(`${path.join(dir, "refers.json")}: properties.a.$ref: $ref 'sub/part.json' resolves to`);
  });
});
