// ENGINE_START's config has one schema: every reader gets its fields typed; a field an older engine or a hand edit left of another type reads as absent, and the writer journals the config as given.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from "vitest";
import type { EventOf, Pricing } from "../../src/journal/events.js";
import { parseLine } from "../../src/journal/parse-lines.js";
import { openJournal } from "../../src/journal/writer.js";
import { runSecrets } from "../../src/secrets.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "engine-start-config-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const start = (config: Record<string, unknown>) => ({ seq: 1, timestamp: "2026-01-01T00:00:00.000Z", type: "ENGINE_START", run_id: "r", agent_home: "/a", work_dir: "/w", config, engine_version: "1" });

describe("ENGINE_START's config", () => {
  it("gives its readers typed fields", () => {
    const event = parseLine(JSON.stringify(start({ agent_name: "a", model: "m", max_iterations: 5, pricing: { input_per_million: 1, output_per_million: 2 } })), "journal.jsonl", 1, 1) as EventOf<"ENGINE_START">;
    expectTypeOf(event.config.model).toEqualTypeOf<string | undefined>();
    expectTypeOf(event.config.max_iterations).toEqualTypeOf<number | undefined>();
    expectTypeOf(event.config.pricing).toEqualTypeOf<Pricing | undefined>();
    expect(event.config).toMatchObject({ agent_name: "a", model: "m", max_iterations: 5, pricing: { input_per_million: 1, output_per_million: 2 } });
  });

  it("reads a field of another type as absent, keeps the journal readable, and keeps fields a later engine added", () => {
    const event = parseLine(JSON.stringify(start({ agent_name: "a", model: 5, max_iterations: "ten", pricing: { input_per_million: -1 }, added_later: { x: 1 } })), "journal.jsonl", 1, 1) as EventOf<"ENGINE_START">;
    expect(event.config.agent_name).toBe("a");
    expect(event.config.model).toBeUndefined();
    expect(event.config.max_iterations).toBeUndefined();
    expect(event.config.pricing).toBeUndefined();
    expect(event.config.added_later).toEqual({ x: 1 });
  });

  it("is journaled byte for byte as the engine gives it, in its order", async () => {
    const path = join(dir, "journal.jsonl");
    const journal = await openJournal(path, { secrets: runSecrets([]) });
    const config = {
      agent_name: "a",
      model: "m",
      max_iterations: 30,
      tools: ["ls"],
      mcp_servers: ["fs"],
      interactive: false,
      sandbox: { agent: { mode: "workspace-write", network: "off" }, tools: {}, mcp_servers: {} },
      pid: 42,
      hostname: "h",
      pricing: { input_per_million: 0.15, output_per_million: 0.6, cached_input_per_million: 0.075 },
      output_schema: { source: "agent.yaml: output_schema", draft: "2020-12", schema: { type: "object", required: ["x"] } },
      provider: "openai-compatible",
      base_url: "http://127.0.0.1:1/v1",
      api_key_source: "DELTA_API_KEY",
      base_url_source: "DELTA_BASE_URL",
      endpoint: { provider: "openai", base_url: "http://127.0.0.1:1/v1" },
    };
    const { seq: _seq, timestamp: _timestamp, ...given } = start(config);
    journal.append(given as never);
    journal.close();
    // The line's body: its last member is the chain's hash.
    const line = readFileSync(path, "utf8").trimEnd().replace(/,"hash":"sha256:[0-9a-f]{64}"\}$/, "}");
    expect(line.slice(line.indexOf('"config":'))).toBe(`"config":${JSON.stringify(config)},"engine_version":"1"}`);
  });
});
