// mcp_servers in agent.yaml and imported files: merged like tools, and every mistake refused with file and field.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadAgent } from "../../src/agent/load.js";
import { configErrorOf, makeAgent, MINIMAL_AGENT_YAML } from "./helpers.js";

describe("mcp_servers", () => {
  it("merges imported servers depth-first, then local ones, the last definition of a name winning, each knowing where it was written", async () => {
    const home = await makeAgent({
      "agent.yaml": `${MINIMAL_AGENT_YAML}imports: [./tools/shared.yaml]\nmcp_servers:\n  - name: fs\n    command: [local-fs, "\${CWD}"]\n`,
      "tools/shared.yaml": "mcp_servers:\n  - name: fs\n    command: [shared-fs]\n  - name: search\n    url: https://mcp.example.com/mcp\n    headers:\n      Authorization: {env: SEARCH_TOKEN, prefix: 'Bearer '}\n",
    });
    const agent = await loadAgent(home);
    expect(agent.mcpServers.map((server) => [server.name, server.command ?? server.url, server.where])).toEqual([
      ["fs", ["local-fs", "${CWD}"], `${join(home, "agent.yaml")}: mcp_servers[0]`],
      ["search", "https://mcp.example.com/mcp", "tools/shared.yaml: mcp_servers[1]"],
    ]);
    expect(agent.mcpServers[1]!.headers).toEqual({ Authorization: { env: "SEARCH_TOKEN", prefix: "Bearer " } });
  });

  it("refuses a server named twice in one file", async () => {
    const home = await makeAgent({ "agent.yaml": `${MINIMAL_AGENT_YAML}mcp_servers:\n  - name: fs\n    command: [a]\n  - name: fs\n    command: [b]\n` });
    expect(await configErrorOf(loadAgent(home))).toBe(`${join(home, "agent.yaml")}: mcp_servers[1]: MCP server 'fs' is already defined at mcp_servers[0] of this file; rename or remove one`);
  });

  it("refuses a header written as a literal, saying to read it from the environment", async () => {
    const home = await makeAgent({ "agent.yaml": `${MINIMAL_AGENT_YAML}mcp_servers:\n  - name: gh\n    url: https://api.example.com/mcp\n    headers:\n      Authorization: "Bearer ghp_123456789"\n` });
    const message = await configErrorOf(loadAgent(home));
    expect(message).toContain("agent.yaml: mcp_servers[0].headers.Authorization: header values are never written in agent.yaml; read each from an environment variable: {env: NAME, prefix: \"Bearer \"}");
    expect(message).toMatch(/\(at \/\S+\/agent\.yaml:\d+:\d+\)/);
  });

  it("refuses a server with both command and url, or neither, and a server name with __", async () => {
    const both = await makeAgent({ "agent.yaml": `${MINIMAL_AGENT_YAML}mcp_servers:\n  - name: x\n    command: [a]\n    url: http://127.0.0.1:1/mcp\n` });
    expect(await configErrorOf(loadAgent(both))).toContain("agent.yaml: mcp_servers[0]: an MCP server has exactly one of command (a stdio server) or url (a Streamable HTTP server)");
    const neither = await makeAgent({ "agent.yaml": `${MINIMAL_AGENT_YAML}mcp_servers:\n  - name: x\n` });
    expect(await configErrorOf(loadAgent(neither))).toContain("exactly one of command");
    const named = await makeAgent({ "agent.yaml": `${MINIMAL_AGENT_YAML}mcp_servers:\n  - name: my__fs\n    command: [a]\n` });
    expect(await configErrorOf(loadAgent(named))).toContain("agent.yaml: mcp_servers[0].name: server names are 1-32 letters, digits, _ or -, without __");
  });

  it("refuses headers on a stdio server, and env or sandbox on a url server", async () => {
    const headers = await makeAgent({ "agent.yaml": `${MINIMAL_AGENT_YAML}mcp_servers:\n  - name: x\n    command: [a]\n    headers:\n      X-Key: {env: KEY}\n` });
    expect(await configErrorOf(loadAgent(headers))).toContain("agent.yaml: mcp_servers[0].headers: headers are for url servers");
    const env = await makeAgent({ "agent.yaml": `${MINIMAL_AGENT_YAML}mcp_servers:\n  - name: x\n    url: http://127.0.0.1:1/mcp\n    env:\n      A: b\n` });
    expect(await configErrorOf(loadAgent(env))).toContain("env, cwd and sandbox are for command (stdio) servers");
    const sandbox = await makeAgent({ "agent.yaml": `${MINIMAL_AGENT_YAML}mcp_servers:\n  - name: x\n    url: http://127.0.0.1:1/mcp\n    sandbox: {mode: off}\n` });
    expect(await configErrorOf(loadAgent(sandbox))).toContain("env, cwd and sandbox are for command (stdio) servers");
  });

  it("accepts an imported file that holds only MCP servers, but not one that holds neither tools nor servers", async () => {
    const servers = await makeAgent({ "agent.yaml": `${MINIMAL_AGENT_YAML}imports: [./s.yaml]\n`, "s.yaml": "mcp_servers:\n  - name: fs\n    command: [a]\n" });
    expect((await loadAgent(servers)).mcpServers.map((server) => server.name)).toEqual(["fs"]);
    const empty = await makeAgent({ "agent.yaml": `${MINIMAL_AGENT_YAML}imports: [./s.yaml]\n`, "s.yaml": "imports: []\n" });
    expect(await configErrorOf(loadAgent(empty))).toContain("s.yaml: tools: an imported file defines a tools: list or an mcp_servers: list");
  });
});
