// Properties over hostile input, in-process: agent packages, tool arguments, run ids, .env files and journal lines.
import fc from "fast-check";
import { readJournal } from "../support/journal-read.js";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadAgent } from "../../src/agent/load.js";
import { ConfigError, JournalError, RunRefusedError } from "../../src/errors.js";

import { openJournal } from "../../src/journal/writer.js";
import { parseDotenv } from "../../src/llm/dotenv.js";
import { resolveProviderEnv } from "../../src/llm/env.js";
import { runPaths } from "../../src/store/run-dir.js";
import { parseRunId } from "../../src/store/run-id.js";
import { bindToolCall } from "../../src/tools/bind.js";
import { expandTool } from "../../src/tools/expand.js";
import { invokeTool } from "../../src/tools/invoke.js";
import { DEFAULT_CONTEXT } from "../e2e/harness.js";
import { runSecrets } from "../../src/secrets.js";
import { inheritedEnv } from "../support/inherited-env.js";
import {
  CANARY,
  CANARY_CONTEXT,
  CANARY_HOOKS,
  anyRunId,
  damagedJournal,
  dotenvText,
  hostileArgument,
  invalidAgentYaml,
  invalidRunId,
} from "../support/hostile-arbitraries.js";

const SEED = Number(process.env.DELTA_PROPERTY_SEED ?? 1123);
const cases: Record<string, number> = {};
let root: string;
let canary: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "delta-hostile-"));
  canary = join(root, "CANARY");
});
afterAll(() => {
  const total = Object.values(cases).reduce((sum, count) => sum + count, 0);
  console.log(`hostile input (seed ${SEED}): ${total} cases — ${Object.entries(cases).map(([name, count]) => `${name} ${count}`).join(", ")}`);
  rmSync(root, { recursive: true, force: true });
});

function count(name: string): void {
  cases[name] = (cases[name] ?? 0) + 1;
}

function withCanary(text: string): string {
  return text.replaceAll(CANARY, canary);
}

let packages = 0;
function writePackage(files: Record<string, string>): string {
  const home = join(root, `pkg-${(packages += 1)}`);
  mkdirSync(home);
  const all = { "system_prompt.md": "hostile", "context.yaml": DEFAULT_CONTEXT, ...files };
  for (const [name, content] of Object.entries(all)) writeFileSync(join(home, name), withCanary(content));
  return home;
}

describe("hostile agent packages", () => {
  it("refuses every invalid agent.yaml with a 126 ConfigError naming agent.yaml, and runs nothing it describes", async () => {
    await fc.assert(
      fc.asyncProperty(invalidAgentYaml, fc.boolean(), async (agentYaml, withHooks) => {
        count("agent packages");
        const home = writePackage({ "agent.yaml": agentYaml, ...(withHooks ? { "hooks.yaml": CANARY_HOOKS, "context.yaml": CANARY_CONTEXT } : {}) });
        const error = await loadAgent(home).then(() => null, (err: unknown) => err);
        expect(error, agentYaml).toBeInstanceOf(ConfigError);
        expect((error as ConfigError).exitCode).toBe(126);
        expect((error as ConfigError).message).toMatch(/^(\/\S*\/)?agent\.yaml[:\s]/);
        expect(existsSync(canary)).toBe(false);
      }),
      { seed: SEED, numRuns: 120 },
    );
  });
});

describe("hostile tool arguments", () => {
  const where = { file: "agent.yaml", path: "tools[0]" };
  const tools = [
    // `--` before the format: a value that starts with "-" is printf's data, so the engine lets it through.
    expandTool({ name: "show", exec: "printf -- %s ${text}" }, where),
    expandTool({ name: "show_sh", shell: "printf -- %s ${text}" }, where),
  ];
  const vars = { AGENT_HOME: "/agent", CWD: "/work" };

  it("binds any argument as exactly one argv entry, untouched, next to the tool's own words", () => {
    fc.assert(
      fc.property(hostileArgument, fc.constantFrom(...tools), (value, tool) => {
        count("tool argument bindings");
        const bound = bindToolCall(tool, { text: value }, vars);
        expect(bound.ok).toBe(true);
        if (!bound.ok) return;
        // The tool's own words, unchanged, then the value as the last entry, whatever it holds.
        const fixed = tool.mode === "exec" ? ["printf", "--", "%s"] : ["sh", "-c", 'printf -- %s "$1"', "--"];
        expect(bound.argv).toEqual([...fixed, value]);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it("runs each argument as data: the tool prints it back byte for byte, or reports why it could not start", async () => {
    await fc.assert(
      fc.asyncProperty(hostileArgument.map(withCanary), fc.constantFrom(...tools), async (value, tool) => {
        count("tool executions");
        const bound = bindToolCall(tool, { text: value }, { AGENT_HOME: root, CWD: root });
        if (!bound.ok) throw new Error(bound.error);
        const result = await invokeTool({ argv: bound.argv, cwd: root, env: {}, baseEnv: inheritedEnv(), timeoutMs: 10_000 });
        if (value.includes("\u0000") || Buffer.byteLength(value) > 131_072) {
          expect(result.status).toBe("ERROR");
          expect(result.observation).toMatch(/could not (be )?start/);
        } else {
          expect(result.status).toBe("SUCCESS");
          expect(result.stdout).toBe(value);
        }
        expect(existsSync(canary)).toBe(false);
      }),
      { seed: SEED, numRuns: 40 },
    );
  });
});

describe("hostile run ids", () => {
  it("refuses every invalid id with RUN_REFUSED quoting it", () => {
    fc.assert(
      fc.property(invalidRunId, (id) => {
        count("invalid run ids");
        expect(() => parseRunId(id)).toThrow(RunRefusedError);
        expect(() => parseRunId(id)).toThrow(`Invalid run id ${JSON.stringify(id)}`);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it("maps every accepted id to a directory directly inside .delta", () => {
    let accepted = 0;
    fc.assert(
      fc.property(anyRunId, (id) => {
        count("run id paths");
        let paths: ReturnType<typeof runPaths>;
        try {
          paths = runPaths("/work", parseRunId(id));
        } catch (err) {
          expect(err).toBeInstanceOf(RunRefusedError);
          return;
        }
        expect(dirname(paths.runDir)).toBe("/work/.delta");
        expect(basename(paths.runDir)).toBe(id);
        expect(id.startsWith(".")).toBe(false);
        accepted += 1;
      }),
      { seed: SEED, numRuns: 300 },
    );
    // The corpus must reach the accepting branch, or the property above says nothing.
    expect(accepted).toBeGreaterThan(0);
  });
});

describe("hostile .env files", () => {
  it("parses any .env text without throwing: valid names only, warnings on real line numbers", () => {
    fc.assert(
      fc.property(dotenvText, (text) => {
        count(".env texts");
        const warnings: { line: number; message: string }[] = [];
        const values = parseDotenv(text, (warning) => warnings.push(warning));
        const lines = text.split(/\r?\n/).length;
        for (const [key, value] of Object.entries(values)) {
          expect(key).toMatch(/^[A-Za-z_][A-Za-z0-9_.-]*$/);
          expect(typeof value).toBe("string");
        }
        for (const warning of warnings) expect(warning.line).toBeGreaterThanOrEqual(1), expect(warning.line).toBeLessThanOrEqual(lines);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it("resolves the provider from a workspace .env of any content, naming the file in every warning", () => {
    const workDir = join(root, "env-ws");
    mkdirSync(workDir, { recursive: true });
    fc.assert(
      fc.property(dotenvText.map(withCanary), (text) => {
        count(".env files");
        writeFileSync(join(workDir, ".env"), text);
        const warnings: string[] = [];
        const resolved = resolveProviderEnv({ workDir, agentHome: workDir, processEnv: {}, warn: (line) => warnings.push(line) });
        for (const warning of warnings) expect(warning).toContain(join(workDir, ".env"));
        if (resolved.apiKey !== undefined) expect(resolved.apiKey.trim()).not.toBe("");
        expect(existsSync(canary)).toBe(false);
      }),
      { seed: SEED, numRuns: 100 },
    );
  });
});

describe("hostile journal lines", () => {
  let journals = 0;
  const write = (text: string): string => {
    const path = join(root, `journal-${(journals += 1)}.jsonl`);
    writeFileSync(path, text);
    return path;
  };

  it("reads a damaged journal only when the damage is a torn last line; otherwise names the file and the line", () => {
    fc.assert(
      fc.property(damagedJournal, (journal) => {
        count("damaged journals");
        const path = write(journal.text);
        const warnings: string[] = [];
        const outcome = (() => {
          try {
            return readJournal(path, { warn: (line) => warnings.push(line) });
          } catch (err) {
            return err;
          }
        })();
        if (journal.damage.kind === "torn") {
          expect(Array.isArray(outcome)).toBe(true);
          expect((outcome as unknown[]).length).toBe(journal.valid);
          expect(warnings.join("\n")).toMatch(/torn last line/);
          return;
        }
        expect(outcome).toBeInstanceOf(JournalError);
        const message = (outcome as JournalError).message;
        expect(message.startsWith(path)).toBe(true);
        if (journal.badLine !== null) expect(message).toContain(`${path} line ${journal.badLine}:`);
        else expect(message).toMatch(/one JSON array/);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it("lets the writer cut a torn tail and go on, and refuses to append to any other damage", async () => {
    await fc.assert(
      fc.asyncProperty(damagedJournal, async (journal) => {
        count("journal repairs");
        const path = write(journal.text);
        const opened = await openJournal(path, { secrets: runSecrets([]) }).then((writer) => writer, (err: unknown) => err);
        if (journal.damage.kind !== "torn") {
          expect(opened).toBeInstanceOf(JournalError);
          return;
        }
        const writer = opened as Awaited<ReturnType<typeof openJournal>>;
        writer.append({ type: "USER_MESSAGE", content: "after the crash" });
        writer.close();
        const events = readJournal(path);
        expect(events.map((event) => event.seq)).toEqual(Array.from({ length: journal.valid + 1 }, (_, index) => index + 1));
      }),
      { seed: SEED, numRuns: 150 },
    );
  });
});

describe("what the properties leave behind", () => {
  it("leaves only the files the properties wrote themselves in their directory (loading hostile packages wrote nothing there)", () => {
    const names = readdirSync(root);
    expect(names.filter((name) => !/^(pkg-\d+|journal-\d+\.jsonl|env-ws)$/.test(name))).toEqual([]);
  });
});
