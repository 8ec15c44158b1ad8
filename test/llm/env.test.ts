// Provider settings from .env files and the environment, in the design's priority order.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { findProjectRoot, resolveProviderEnv } from "../../src/llm/env.js";

let root: string;
let agentHome: string;
let workDir: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "delta-env-"));
  await mkdir(join(root, ".git"));
  agentHome = join(root, "agents", "my-agent");
  workDir = join(agentHome, "workspaces", "W001");
  await mkdir(workDir, { recursive: true });
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const resolveWith = (processEnv: NodeJS.ProcessEnv = {}, warn?: (m: string) => void) =>
  resolveProviderEnv({ workDir, agentHome, processEnv, ...(warn ? { warn } : {}) });

describe("resolveProviderEnv", () => {
  it("prefers the workspace .env over the agent's, the project root's and the environment", async () => {
    await writeFile(join(root, ".env"), "DELTA_API_KEY=sk-root\nDELTA_BASE_URL=http://root/v1\n");
    await writeFile(join(agentHome, ".env"), "DELTA_API_KEY=sk-agent\n");
    await writeFile(join(workDir, ".env"), "DELTA_API_KEY=sk-work\n");
    const env = resolveWith({ DELTA_API_KEY: "sk-process", DELTA_BASE_URL: "http://process/v1" });
    expect(env.apiKey).toBe("sk-work");
    expect(env.baseUrl).toBe("http://root/v1");
    expect(env.sourceOf).toEqual({ apiKey: `DELTA_API_KEY from ${join(workDir, ".env")}`, baseUrl: `DELTA_BASE_URL from ${join(root, ".env")}` });
    expect(env.files).toEqual([join(workDir, ".env"), join(agentHome, ".env"), join(root, ".env")].map((path) => ({ path, found: true })));
  });

  it("takes DELTA_MODEL from the same layers, a .env before the environment", async () => {
    expect(resolveWith({ DELTA_MODEL: "from-env" })).toMatchObject({ model: "from-env", sourceOf: { model: "DELTA_MODEL from the environment" } });
    await writeFile(join(agentHome, ".env"), "DELTA_MODEL=from-agent-env\n");
    expect(resolveWith({ DELTA_MODEL: "from-env" }).model).toBe("from-agent-env");
  });

  it("falls through agent .env, then project root .env, then the environment", async () => {
    expect(resolveWith({ DELTA_API_KEY: "sk-process" }).apiKey).toBe("sk-process");
    await writeFile(join(root, ".env"), "DELTA_API_KEY=sk-root\n");
    expect(resolveWith({ DELTA_API_KEY: "sk-process" }).apiKey).toBe("sk-root");
    await writeFile(join(agentHome, ".env"), "export DELTA_API_KEY='sk-agent'\n");
    expect(resolveWith({ DELTA_API_KEY: "sk-process" }).apiKey).toBe("sk-agent");
  });

  it("uses OPENAI_API_KEY and OPENAI_BASE_URL only when no DELTA_ name is set anywhere", async () => {
    await writeFile(join(workDir, ".env"), "OPENAI_API_KEY=sk-openai\nOPENAI_BASE_URL=http://openai/v1\n");
    expect(resolveWith({})).toMatchObject({ apiKey: "sk-openai", baseUrl: "http://openai/v1" });
    expect(resolveWith({ DELTA_API_KEY: "sk-delta" }).apiKey).toBe("sk-delta");
  });

  it("for the anthropic provider, falls back to ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL, never to the OPENAI_ names", async () => {
    const both = { OPENAI_API_KEY: "sk-openai-key", ANTHROPIC_API_KEY: "sk-ant-key", ANTHROPIC_BASE_URL: "http://claude-gateway" };
    const anthropic = resolveProviderEnv({ workDir, agentHome, processEnv: both, provider: "anthropic" });
    expect(anthropic).toMatchObject({ apiKey: "sk-ant-key", baseUrl: "http://claude-gateway", sourceOf: { apiKey: "ANTHROPIC_API_KEY from the environment" } });
    expect(resolveProviderEnv({ workDir, agentHome, processEnv: both, provider: "openai-responses" })).toMatchObject({ apiKey: "sk-openai-key" });
    expect(resolveProviderEnv({ workDir, agentHome, processEnv: { ...both, DELTA_API_KEY: "sk-delta-key" }, provider: "anthropic" }).apiKey).toBe("sk-delta-key");
  });

  it("DELTA_PROVIDER from a .env or the environment wins over agent.yaml's provider, and picks that vendor's key", async () => {
    await writeFile(join(agentHome, ".env"), "DELTA_PROVIDER=anthropic\nANTHROPIC_API_KEY=sk-ant-from-env-file\n");
    const env = resolveProviderEnv({ workDir, agentHome, processEnv: { OPENAI_API_KEY: "sk-openai-key" }, provider: "openai" });
    expect(env).toMatchObject({ provider: "anthropic", apiKey: "sk-ant-from-env-file", sourceOf: { provider: `DELTA_PROVIDER from ${join(agentHome, ".env")}` } });
  });

  it("lists every key any layer holds, used or not, as the run's secrets", async () => {
    await writeFile(join(workDir, ".env"), "DELTA_API_KEY=sk-work-key\n");
    const env = resolveWith({ DELTA_API_KEY: "sk-shadowed-key", OPENAI_API_KEY: "sk-openai-key", ANTHROPIC_API_KEY: "sk-ant-key", OTHER: "not-a-key" });
    expect(env.apiKey).toBe("sk-work-key");
    expect(env.keys.sort()).toEqual(["sk-ant-key", "sk-openai-key", "sk-shadowed-key", "sk-work-key"]);
  });

  it("ignores empty values and reports nothing when nothing is set", () => {
    expect(resolveWith({ DELTA_API_KEY: "  " })).toMatchObject({ sourceOf: {} });
    expect(resolveWith({ DELTA_API_KEY: "  " }).apiKey).toBeUndefined();
  });

  it("finds no project root .env when no .git is above the agent", async () => {
    const lone = await mkdtemp(join(tmpdir(), "delta-env-lone-"));
    try {
      await writeFile(join(root, ".env"), "DELTA_API_KEY=sk-root\n");
      expect(findProjectRoot(lone)).toBeUndefined();
      expect(resolveProviderEnv({ workDir: lone, agentHome: lone, processEnv: {} }).apiKey).toBeUndefined();
    } finally {
      await rm(lone, { recursive: true, force: true });
    }
  });

  it("accepts a .git file (a worktree) as the project root marker", async () => {
    const project = join(root, "agents");
    await writeFile(join(project, ".git"), "gitdir: elsewhere\n");
    await writeFile(join(project, ".env"), "DELTA_API_KEY=sk-worktree\n");
    expect(findProjectRoot(agentHome)).toBe(project);
    expect(resolveWith().apiKey).toBe("sk-worktree");
  });

  it("skips a malformed line with a warning naming the file and line, and keeps the rest", async () => {
    const warnings: string[] = [];
    await writeFile(join(agentHome, ".env"), "this is not a setting\nDELTA_API_KEY=sk-agent\n");
    expect(resolveWith({}, (m) => warnings.push(m)).apiKey).toBe("sk-agent");
    expect(warnings).toEqual([`${join(agentHome, ".env")}:1: expected KEY=value; line skipped`]);
  });

  it("never writes what it reads into process.env", async () => {
    await writeFile(join(workDir, ".env"), "DELTA_API_KEY=sk-private-test\nDELTA_TEST_MARKER=1\n");
    resolveWith({});
    expect(process.env.DELTA_TEST_MARKER).toBeUndefined();
    expect(Object.values(process.env)).not.toContain("sk-private-test");
  });
});
