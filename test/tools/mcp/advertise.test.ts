// Which MCP tools the model is offered, under which names: allow and deny lists, invalid names, collisions.
import { describe, expect, it } from "vitest";
import { McpServerError } from "../../../src/errors.js";
import { checkNameCollisions, selectTools, toMcpFunctionTool, type ListedTool } from "../../../src/tools/mcp/advertise.js";
import type { McpServerConfig } from "../../../src/tools/mcp/schema.js";
import { thrownMessage } from "../../support/thrown.js";

const schema = { type: "object", properties: { path: { type: "string" } }, required: ["path"] };
const listed: ListedTool[] = [
  { name: "read_file", description: "Read a file", inputSchema: schema },
  { name: "write_file", title: "Write", inputSchema: { properties: {} } },
  { name: "delete_all", inputSchema: { type: "object" } },
];

function server(extra: Partial<McpServerConfig> = {}): McpServerConfig {
  return { name: "fs", command: ["x"], where: "agent.yaml: mcp_servers[0]", ...extra };
}

function refusal(run: () => unknown): string {
  return thrownMessage(run, McpServerError);
}

describe("selectTools", () => {
  it("offers every tool as <server>__<tool> with the server's own schema", () => {
    const tools = selectTools(server(), listed, () => {});
    expect(tools.map((tool) => tool.name)).toEqual(["fs__read_file", "fs__write_file", "fs__delete_all"]);
    expect(toMcpFunctionTool(tools[0]!)).toEqual({ type: "function", function: { name: "fs__read_file", description: "Read a file", parameters: schema } });
  });

  it("falls back to the title, then to a sentence naming the server, and gives a schema without type an object type", () => {
    const [, write, remove] = selectTools(server(), listed, () => {});
    expect(write).toMatchObject({ description: "Write", inputSchema: { type: "object", properties: {} } });
    expect(remove!.description).toBe("Tool 'delete_all' of MCP server 'fs'");
  });

  it("keeps only allowed tools and drops denied ones", () => {
    expect(selectTools(server({ tools: { allow: ["read_file", "delete_all"], deny: ["delete_all"] } }), listed, () => {}).map((tool) => tool.tool)).toEqual(["read_file"]);
  });

  it("refuses an allowed tool the server does not have, listing what it has", () => {
    const message = refusal(() => selectTools(server({ tools: { allow: ["read_fiel"] } }), listed, () => {}));
    expect(message).toBe("MCP server 'fs' (agent.yaml: mcp_servers[0]): tools.allow names 'read_fiel', which the server does not offer; it offers: read_file, write_file, delete_all. Fix the list.");
  });

  it("only warns about a denied tool the server does not have", () => {
    const warnings: string[] = [];
    selectTools(server({ tools: { deny: ["gone"] } }), listed, (line) => warnings.push(line));
    expect(warnings).toEqual(["[warning] MCP server 'fs' (agent.yaml: mcp_servers[0]): tools.deny names 'gone', which the server does not offer"]);
  });

  it("refuses a tool whose offered name would not be a valid function name, and says how to leave it out", () => {
    const message = refusal(() => selectTools(server(), [{ name: "files.read", inputSchema: schema }], () => {}));
    expect(message).toContain("tool 'files.read' would be offered as 'fs__files.read', which is not a valid function name");
    expect(message).toContain("add it to tools.deny");
    expect(selectTools(server({ tools: { deny: ["files.read"] } }), [{ name: "files.read", inputSchema: schema }], () => {})).toEqual([]);
  });

  it("leaves out, with a warning, a tool that runs only as an MCP task", () => {
    const warnings: string[] = [];
    const tools = selectTools(server(), [{ name: "research", inputSchema: schema, execution: { taskSupport: "required" } }], (line) => warnings.push(line));
    expect(tools).toEqual([]);
    expect(warnings[0]).toContain("tool 'research' runs only as an MCP task");
  });
});

describe("checkNameCollisions", () => {
  const servers = [server(), server({ name: "fs_", where: "tools/more.yaml: mcp_servers[0]" })];

  it("refuses an MCP tool named like an exec tool, naming both", () => {
    const tools = selectTools(servers[0]!, listed, () => {});
    const message = refusal(() => checkNameCollisions([{ name: "fs__write_file", source: "agent.yaml" }], tools, servers));
    expect(message).toBe(
      "Two tools would be offered to the model as 'fs__write_file': the tool 'fs__write_file' defined in agent.yaml, and tool 'write_file' of MCP server 'fs' (agent.yaml: mcp_servers[0]). Rename the tool, or deny one of them with tools.deny.",
    );
  });

  it("refuses two servers' tools offered under one name, naming both servers", () => {
    const first = selectTools(servers[0]!, [{ name: "_x", inputSchema: schema }], () => {});
    const second = selectTools(servers[1]!, [{ name: "x", inputSchema: schema }], () => {});
    expect(first[0]!.name).toBe(second[0]!.name);
    const message = refusal(() => checkNameCollisions([], [...first, ...second], servers));
    expect(message).toContain("tool '_x' of MCP server 'fs' (agent.yaml: mcp_servers[0]), and tool 'x' of MCP server 'fs_' (tools/more.yaml: mcp_servers[0])");
  });

  it("accepts distinct names", () => {
    expect(() => checkNameCollisions([{ name: "echo", source: "agent.yaml" }], selectTools(servers[0]!, listed, () => {}), servers)).not.toThrow();
  });
});
