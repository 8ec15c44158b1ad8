// Opens the box one tool call, MCP server, hook or generator runs in: its paths resolved (the secret ones hidden), its environment filtered, its proxy started.
import { existsSync, mkdirSync, realpathSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { envFiles } from "../llm/env.js";
import type { SandboxBox } from "../process/sandbox/argv.js";
import { sandboxEnvironment } from "../process/sandbox/env.js";
import type { RunSandbox, SandboxPolicy } from "../process/sandbox/policy-schema.js";
import { PRIVATE_DIR_MODE } from "../private-modes.js";
import { userStateDir } from "../store/user-state.js";
import { proxySocketsDir, startHostProxy, type RefusedConnections } from "../process/sandbox/host-proxy.js";
import { engineRoute } from "./engine-route.js";
import { engineCodeFolders, enginePackage } from "../process/sandbox/engine-code.js";

/** The secret folders and files of $HOME every box shows empty. */
const HIDDEN_HOME_PATHS = [".ssh", ".aws", ".config/gcloud", ".netrc", ".docker"] as const;

/** The port the forwarder listens on inside a proxied box: the namespace is the box's own, so any port is free. */
const BOX_PROXY_PORT = 3128;

interface BoxPlace {
  workDir: string;
  agentHome: string;
  /** env_passthrough: variables a boxed process still gets. */
  passthrough: readonly string[];
  /** Under `.delta/` yet writable: context_artifacts/ for a boxed generator. */
  writableInProtected?: readonly string[];
}

export interface OpenBox {
  /** The policy as declared, for the call's io record. */
  policy: SandboxPolicy;
  box: SandboxBox;
  /** `env` filtered for the box, with the proxy variables when its network is a host list. */
  env: Record<string, string>;
  /** Connections the proxy refused while the box was open: distinct `host:port`s (bounded), and how many more. */
  refused(): RefusedConnections;
  close(): Promise<void>;
}

export async function openBox(policy: SandboxPolicy, place: BoxPlace, env: Record<string, string>): Promise<OpenBox> {
  const workDir = real(place.workDir);
  const agentHome = real(place.agentHome);
  const home = env.HOME ?? os.homedir();
  const write = (policy.write ?? []).map((given) => {
    const target = expandPath(given, { home, workDir, agentHome });
    mkdirSync(target, { recursive: true });
    return real(target);
  });
  makeUserState();
  const hidden = hiddenPaths([policy], { home, workDir, agentHome });
  for (const target of place.writableInProtected ?? []) mkdirSync(target, { recursive: true });
  const base = { workDir, writeWorkspace: policy.mode === "workspace-write", write, agentHome, hidden, writableInProtected: place.writableInProtected ?? [], engineCode: engineCodeFolders() };
  const network = policy.network ?? "off";
  const plain = { policy, env: sandboxEnvironment(env, place.passthrough), refused: () => ({ targets: [], more: 0 }), close: async () => {} };
  if (network === "on") return { ...plain, box: { ...base, network: { kind: "on" } } };
  const seccomp = seccompProgram();
  if (network === "off") return { ...plain, box: { ...base, network: { kind: "off", seccomp } } };
  const proxy = await startHostProxy(network, engineRoute(process.env));
  return {
    policy,
    box: { ...base, network: { kind: "proxy", socket: proxy.socketPath, port: BOX_PROXY_PORT, forwarder: [process.execPath, path.join(enginePackage(), "dist", "sandbox-forwarder.cjs")], seccomp } },
    env: sandboxEnvironment(env, place.passthrough, `http://127.0.0.1:${BOX_PROXY_PORT}`),
    refused: () => proxy.refused(),
    close: () => proxy.close(),
  };
}

/** The seccomp program the build wrote for this machine's architecture (scripts/seccomp-filter.mjs). */
function seccompProgram(): string {
  const program = path.join(enginePackage(), "dist", "seccomp", `${process.arch}.bpf`);
  if (!existsSync(program)) {
    throw new Error(`${program} is missing: the engine has a seccomp program for x64 and arm64 only, and a box without the host's network needs one; give the tool network: on, or run it with --sandbox off`);
  }
  return program;
}

/**
 * What a box of `policies` is shown empty: the secret folders of $HOME, the user's state folder, the engine's .env files, each policy's
 * `deny_read:`, and the folder of the engine's proxy sockets (under /tmp, which a box replaces anyway, unless a root holds it).
 */
function hiddenPaths(policies: readonly SandboxPolicy[], where: { home: string; workDir: string; agentHome: string }): string[] {
  return [
    ...HIDDEN_HOME_PATHS.map((name) => real(path.join(where.home, name))),
    real(userStateDir()),
    proxySocketsDir(),
    ...envFiles(where.workDir, where.agentHome).map(real),
    ...policies.flatMap((policy) => policy.deny_read ?? []).map((given) => real(expandPath(given, where))),
  ];
}

/**
 * The user's state folder (the `mcp serve` token, the run index), made before a box opens if missing, so the box hides
 * it as a folder: a file created in it while the box runs stays out of sight too.
 */
function makeUserState(): void {
  try {
    mkdirSync(userStateDir(), { recursive: true, mode: PRIVATE_DIR_MODE });
  } catch {
    // A home that cannot be written: nothing can be put there either.
  }
}

/**
 * Everything any box of the run is shown empty, whether or not a box is open: the engine reads no file
 * a link leads into it on a box's behalf (context files, generators' outputs).
 */
export function hiddenFromBoxes(sandbox: RunSandbox, place: { workDir: string; agentHome: string }, home: string): string[] {
  const policies = [sandbox.agent, ...Object.values(sandbox.tools), ...Object.values(sandbox.mcp_servers)].filter((policy): policy is SandboxPolicy => policy !== null);
  return hiddenPaths(policies, { home, workDir: real(place.workDir), agentHome: real(place.agentHome) });
}

/** Every folder a box of `policies` may write (the workspace under workspace-write, each policy's `write:`), its links resolved. */
export function writableRoots(policies: readonly SandboxPolicy[], place: { workDir: string; agentHome: string }, home: string): string[] {
  const where = { home, workDir: real(place.workDir), agentHome: real(place.agentHome) };
  return [...new Set(policies.flatMap((policy) => [...(policy.mode === "workspace-write" ? [where.workDir] : []), ...(policy.write ?? []).map((given) => real(expandPath(given, where)))]))];
}

/** `path` itself, or anything below it, once both are resolved. */
export function resolvedWithin(target: string, root: string): boolean {
  const relative = path.relative(root, real(target));
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

/** `~/x`, `${AGENT_HOME}/x`, `${CWD}/x`, an absolute path, or a path relative to the workspace. */
function expandPath(given: string, where: { home: string; workDir: string; agentHome: string }): string {
  const expanded = given
    .replace(/^~(?=\/|$)/, where.home)
    .replaceAll("${AGENT_HOME}", where.agentHome)
    .replaceAll("${CWD}", where.workDir);
  return path.resolve(where.workDir, expanded);
}

/** The path with its symlinks resolved, as far as it exists: a bind follows links, and the box must name what it protects. */
function real(target: string): string {
  const absolute = path.resolve(target);
  if (existsSync(absolute)) return realpathSync(absolute);
  const parent = path.dirname(absolute);
  return parent === absolute ? absolute : path.join(real(parent), path.basename(absolute));
}
