import { describe, expect, it } from "vitest";
import { expandTool } from "../../src/tools/expand.js";
import { toFunctionTool } from "../../src/tools/function-schema.js";
import { ToolDefinitionSchema } from "../../src/tools/schema.js";

describe("toFunctionTool", () => {
  it("advertises string properties, requires only those without a default, and forbids extra keys", () => {
    const definition = ToolDefinitionSchema.parse({
      name: "search_tool",
      description: "Search a file",
      exec: "grep ${pattern} ${file}",
      stdin: "notes",
      parameters: [
        { name: "file", description: "File to search in", default: "./data.txt" },
        { name: "pattern", description: "Search pattern (regex)" },
        { name: "notes", required: false },
      ],
    });
    const tool = toFunctionTool(expandTool(definition, { file: "agent.yaml", path: "tools[0]" }));
    expect(tool).toEqual({
      type: "function",
      function: {
        name: "search_tool",
        description: "Search a file",
        parameters: {
          type: "object",
          properties: {
            pattern: { type: "string", description: "Search pattern (regex)" },
            file: { type: "string", description: "File to search in", default: "./data.txt" },
            notes: { type: "string" },
          },
          required: ["pattern"],
          additionalProperties: false,
        },
      },
    });
  });
});
