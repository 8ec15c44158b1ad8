// Bundles the two CLIs, their launcher helper, the MCP SDK (client and server), ajv and the OpenTelemetry SDK into dist/, one CommonJS file each, and writes the JSON Schemas editors read.
import { rmSync } from "node:fs";
import { AJV_BUNDLE, AJV_ENTRY, MCP_SDK_BUNDLE, MCP_SDK_ENTRY, MCP_SERVER_SDK_BUNDLE, MCP_SERVER_SDK_ENTRY, OTEL_SDK_BUNDLE, OTEL_SDK_ENTRY, bundleCli } from "./bundle.mjs";
import { writeJsonSchemas } from "./json-schemas.mjs";

// Start empty: no stale bundle or code cache is left to ship.
rmSync("dist", { recursive: true, force: true });

await Promise.all([
  bundleCli("src/cli/main.ts", "delta", { sdkApart: true }),
  // Loaded by the delta bundle only for agents with MCP servers.
  bundleCli(MCP_SDK_ENTRY, MCP_SDK_BUNDLE),
  // Loaded by the delta bundle only for `delta mcp serve`.
  bundleCli(MCP_SERVER_SDK_ENTRY, MCP_SERVER_SDK_BUNDLE),
  // Loaded by the delta bundle only for runs with an output schema.
  bundleCli(AJV_ENTRY, AJV_BUNDLE),
  // Loaded by the delta bundle only when spans are exported (OTEL_* set, or `delta export`).
  bundleCli(OTEL_SDK_ENTRY, OTEL_SDK_BUNDLE),
  bundleCli("src/sessions/main.ts", "delta-sessions"),
  // Run with node inside a box whose network is a host list: carries its connections to the engine's proxy.
  bundleCli("src/process/sandbox-forwarder.ts", "sandbox-forwarder", { stamp: false }),
  // The launcher helper is the one file compiled without a cache: small, and it is what reads the cache.
  bundleCli("src/cli/run-bundle.ts", "run-bundle", { stamp: false }),
  writeJsonSchemas(),
]);
