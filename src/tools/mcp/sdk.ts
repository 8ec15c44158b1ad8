// The parts of the official MCP SDK the engine uses, in one module: the build bundles it on its own (dist/delta-mcp-sdk.cjs), loaded only for agents with MCP servers.
export { Client } from "@modelcontextprotocol/sdk/client/index.js";
export { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
export { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
export { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
export type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
export type { CallToolResult, JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
