// `effects: idempotent` in agent.yaml: on an exec or shell tool, and on an MCP server's tool by its name; anything else refused with file and field.
import { describe, expect, it } from "vitest";
import { loadAgent } from "../../src/agent/load.js";
import { McpServerError } from "../../src/errors.js";
import { selectTools, type ListedTool } from "../../src/tools/mcp/advertise.js";
import type { McpServerConfig } from "../../src/tools/mcp/schema.js";
import { thrownMessage } from "../support/thrown.js";
import { configErrorOf, makeAgent, MINIMAL_AGENT_YAML } from "./helpers.js";

describe("effects on a tool", () => {
  it("loads effects: idempotent on exec and shell tools, and nothing on a tool that does not say it", async () => {
    const home = await makeAgent({ "agent.yaml": `${MINIMAL_AGENT_YAML}tools:\n  - name: put\n    exec: "curl -X PUT \${url}"\n    effects: idempotent\n  - name: sync\n    shell: "rsync -a src/ \${dest}"\n    effects: idempotent\n  - name: post\n    exec: "curl -X POST \${url}"\n` });
    const agent = await loadAgent(home);
    expect(agent.tools.map((tool) => [tool.name, tool.effects])).toEqual([["put", "idempotent"], ["sync", "idempotent"], ["post", undefined]]);
  });

  it("refuses any other value, naming the file, the field and the one value there is", async () => {
    const home = await makeAgent({ "agent.yaml": `${MINIMAL_AGENT_YAML}tools:\n  - name: post\n    exec: "curl -X POST \${url}"\n    effects: retry\n` });
    const message = await configErrorOf(loadAgent(home));
    expect(message).toContain("agent.yaml: tools[0].effects: the only value is idempotent");
  });
});

describe("effects of an MCP server's tools", () => {
  const listed: ListedTool[] = [
    { name: "get_order", inputSchema: { type: "object" } },
    { name: "refund", inputSchema: { type: "object" } },
  ];
  const server = (extra: Partial<McpServerConfig> = {}): McpServerConfig => ({ name: "shop", url: "https://shop.example/mcp", where: "agent.yaml: mcp_servers[0]", ...extra });

  it("marks the tools the agent names idempotent, and no other", () => {
    const tools = selectTools(server({ effects: { refund: "idempotent" } }), listed, () => {});
    expect(tools.map((tool) => [tool.tool, tool.effects])).toEqual([["get_order", undefined], ["refund", "idempotent"]]);
  });

  it("does not trust the server's own idempotentHint", () => {
    const hinted = listed.map((tool) => ({ ...tool, annotations: { idempotentHint: true, readOnlyHint: true } }));
    expect(selectTools(server(), hinted, () => {}).map((tool) => tool.effects)).toEqual([undefined, undefined]);
  });

  it("refuses a name the server does not offer, listing what it offers", () => {
    const message = thrownMessage(() => selectTools(server({ effects: { refnud: "idempotent" } }), listed, () => {}), McpServerError);
    expect(message).toBe("MCP server 'shop' (agent.yaml: mcp_servers[0]): effects names 'refnud', which the server does not offer; it offers: get_order, refund. Fix the names.");
  });

  it("is read from agent.yaml with the server", async () => {
    const home = await makeAgent({ "agent.yaml": `${MINIMAL_AGENT_YAML}mcp_servers:\n  - name: shop\n    url: https://shop.example/mcp\n    effects:\n      refund: idempotent\n` });
    expect((await loadAgent(home)).mcpServers[0]!.effects).toEqual({ refund: "idempotent" });
    const bad = await makeAgent({ "agent.yaml": `${MINIMAL_AGENT_YAML}mcp_servers:\n  - name: shop\n    url: https://shop.example/mcp\n    effects:\n      refund: at_least_once\n` });
    expect(await configErrorOf(loadAgent(bad))).toContain("agent.yaml: mcp_servers[0].effects.refund: the only value is idempotent");
  });
});
