// `delta` started as a command with NODE_EXTRA_CA_CERTS: Node skips parsing the bundle at start, HTTPS models are still trusted, tools see the variable unchanged.
import { execa } from "execa";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { reply, type MockLlm } from "../support/mock-llm.js";
import { actionResults, DELTA_BIN, NO_MODEL_KEYS, REPO, modelEnv, writeAgent, type DeltaResult, setUpE2e } from "./harness.js";

const TLS = join(REPO, "test/fixtures/tls");
const CA_FILE = join(TLS, "ca.pem");
const serverTls = { key: readFileSync(join(TLS, "server.key"), "utf8"), cert: readFileSync(join(TLS, "server.pem"), "utf8") };

const { root, serve } = setUpE2e("delta-deferred-");
let server: MockLlm | undefined;
let agent: string;
let runs = 0;
/** A --require probe: records the two variables as Node saw them when it started, before the engine ran. */
let probe: string;

beforeAll(() => {
  agent = writeAgent(root, {
    agentYaml: `name: env-agent
llm:
  model: mock-model
  max_retries: 0
tools:
  - name: show_env
    shell: 'echo "extra=[$NODE_EXTRA_CA_CERTS] deferred=[$DELTA_DEFERRED_CA_CERTS]"'
`,
  });
  probe = join(root, "startup-probe.cjs");
  writeFileSync(
    probe,
    `require("node:fs").writeFileSync(process.env.PROBE_OUT, JSON.stringify({ extra: process.env.NODE_EXTRA_CA_CERTS ?? null, deferred: process.env.DELTA_DEFERRED_CA_CERTS ?? null }));\n`,
  );
});

/** Runs bin/delta.js the way `delta` runs: as an executable, so its shell lines run first. */
async function deltaCommand(env: Record<string, string>): Promise<DeltaResult & { runId: string; workDir: string; atStart: { extra: string | null; deferred: string | null } }> {
  runs += 1;
  const runId = `deferred-${runs}`;
  const workDir = join(root, `ws-${runs}`);
  const probeOut = join(root, `probe-${runs}.json`);
  const result = await execa(DELTA_BIN, ["run", "--agent", agent, "-w", workDir, "--run-id", runId, "-m", "show the environment"], {
    env: { ...NO_MODEL_KEYS, NODE_EXTRA_CA_CERTS: "", ...modelEnv(server!.baseUrl), PROBE_OUT: probeOut, NODE_OPTIONS: `--require ${probe}`, ...env },
    reject: false,
    timeout: 30_000,
  });
  return {
    exitCode: result.exitCode ?? -1,
    stdout: String(result.stdout),
    stderr: String(result.stderr),
    runId,
    workDir,
    atStart: JSON.parse(readFileSync(probeOut, "utf8")) as { extra: string | null; deferred: string | null },
  };
}

const toolThenDone = () => [reply.toolCalls([{ name: "show_env", arguments: {} }]), reply.text("done")];

function observation(workDir: string, runId: string): string {
  return actionResults(workDir, runId)[0]?.observation_content ?? "";
}

describe("NODE_EXTRA_CA_CERTS through the delta command", () => {
  it("reaches an HTTPS model whose CA is only in that file, though Node started without it; tools see the variable as set", async () => {
    server = await serve(toolThenDone(), { tls: serverTls });
    const run = await deltaCommand({ NODE_EXTRA_CA_CERTS: CA_FILE });
    expect(run.exitCode).toBe(0);
    expect(run.atStart).toEqual({ extra: null, deferred: CA_FILE });
    expect(server.requests).toHaveLength(2);
    expect(observation(run.workDir, run.runId)).toContain(`extra=[${CA_FILE}] deferred=[]`);
  });

  it("without that file the same HTTPS model is refused: the certificate is what the deferred CA trusts", async () => {
    server = await serve(toolThenDone(), { tls: serverTls });
    const run = await deltaCommand({});
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toMatch(/LLM_ERROR: .*unable to verify the first certificate/);
    expect(server.requests).toHaveLength(0);
  });

  it("a file that cannot be read gets Node's own warning when HTTPS first needs it, and the default roots", async () => {
    server = await serve(toolThenDone(), { tls: serverTls });
    const missing = join(root, "no-such-bundle.pem");
    const run = await deltaCommand({ NODE_EXTRA_CA_CERTS: missing });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain(`Warning: Ignoring extra certs from \`${missing}\`, load failed:`);
  });

  it("an HTTP model never needs the certificates, and NODE_OPTIONS that picks a CA store leaves Node in charge", async () => {
    server = await serve(toolThenDone());
    const plain = await deltaCommand({ NODE_EXTRA_CA_CERTS: join(root, "no-such-bundle.pem") });
    expect(plain.exitCode).toBe(0);
    expect(plain.stderr).not.toContain("Ignoring extra certs");

    server.push(...toolThenDone());
    const chosen = await deltaCommand({ NODE_EXTRA_CA_CERTS: CA_FILE, NODE_OPTIONS: `--use-bundled-ca --require ${probe}` });
    expect(chosen.exitCode).toBe(0);
    expect(chosen.atStart).toEqual({ extra: CA_FILE, deferred: null });
    expect(observation(chosen.workDir, chosen.runId)).toContain(`extra=[${CA_FILE}] deferred=[]`);
  });
});
