import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach } from "vitest";
import { ConfigError } from "../../src/errors.js";

export const MINIMAL_AGENT_YAML = "name: test-agent\nllm:\n  model: gpt-4o-mini\n";
export const DEFAULT_CONTEXT = "sources:\n  - type: file\n    path: '${AGENT_HOME}/system_prompt.md'\n  - type: journal\n";

const created: string[] = [];

afterEach(async () => {
  await Promise.all(created.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A temp dir removed after each test. */
export async function tempDir(prefix = "delta-agent-"): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  created.push(dir);
  return dir;
}

/** An agent directory with the given files; null leaves out a default file. */
export async function makeAgent(files: Record<string, string | null> = {}): Promise<string> {
  const home = await tempDir();
  const all: Record<string, string | null> = {
    "agent.yaml": MINIMAL_AGENT_YAML,
    "system_prompt.md": "You are a test agent.\n",
    "context.yaml": DEFAULT_CONTEXT,
    ...files,
  };
  for (const [name, content] of Object.entries(all)) {
    if (content === null) continue;
    const target = path.join(home, name);
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, content);
  }
  return home;
}

export async function configErrorOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    expect126(err);
    return err.message;
  }
  throw new Error("expected a ConfigError");
}

function expect126(err: ConfigError): void {
  if (err.exitCode !== 126) throw new Error(`ConfigError with exit code ${err.exitCode}`);
}
