// The `sandbox:` policy of agent.yaml, of one tool and of one MCP server: what a boxed process may write, read and reach.
import { z } from "zod";

export const SANDBOX_MODES = ["read-only", "workspace-write", "off"] as const;
const SandboxModeSchema = z.enum(SANDBOX_MODES, { message: "mode is one of read-only, workspace-write or off" });
export type SandboxMode = z.infer<typeof SandboxModeSchema>;

/** `host`, `host:port` or `*.domain` (every name below domain); an IPv6 address goes in brackets: `[::1]:8080`. */
const HOST_ENTRY = /^(\*\.)?([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?$/;

const SandboxNetworkSchema = z.union([
  z.enum(["off", "on"], { message: "network is off, on, or a list of hosts" }),
  z.array(
    z.string().regex(HOST_ENTRY, { message: "each network entry is host, host:port or *.domain, e.g. api.github.com, localhost:8080, *.pypi.org" }),
    { message: "network is off, on, or a list of hosts" },
  ).min(1, { message: "an empty host list is network: off; write that instead" }),
]);

const pathList = z.array(z.string().min(1, { message: "a path is not empty" }));

export const SandboxPolicySchema = z.strictObject({
  mode: SandboxModeSchema,
  /** Folders (or files) writable besides the workspace; `~/` and `${AGENT_HOME}`/`${CWD}` are expanded. */
  write: pathList.optional(),
  /** Paths shown empty to the boxed process, besides the usual secret folders. */
  deny_read: pathList.optional(),
  network: SandboxNetworkSchema.optional(),
  /** Box hooks and context generators too (agent level only; they are the author's code and run unboxed otherwise). */
  hooks: z.boolean().optional(),
});
export type SandboxPolicy = z.infer<typeof SandboxPolicySchema>;

/** The run's boxes as ENGINE_START journals them: the agent's policy, each tool's and server's own, and `--sandbox MODE`. */
export const RunSandboxSchema = z.strictObject({
  agent: SandboxPolicySchema.nullable(),
  tools: z.record(z.string(), SandboxPolicySchema),
  mcp_servers: z.record(z.string(), SandboxPolicySchema),
  /** `--sandbox MODE`: the mode of every policy, for this invocation. */
  override: SandboxModeSchema.optional(),
});
export type RunSandbox = z.infer<typeof RunSandboxSchema>;

/** One line for people: `workspace-write, network api.github.com`, `off`, or `none`. */
export function describePolicy(policy: SandboxPolicy | null): string {
  if (policy === null) return "none";
  if (policy.mode === "off") return "off";
  const network = policy.network === undefined || policy.network === "off" ? "no network" : policy.network === "on" ? "network on" : `network ${policy.network.join(" ")}`;
  const write = policy.write?.length ? `, write ${policy.write.join(" ")}` : "";
  const hidden = policy.deny_read?.length ? `, deny_read ${policy.deny_read.join(" ")}` : "";
  return `${policy.mode}, ${network}${write}${hidden}`;
}

/** ENGINE_START's `sandbox` for people: `none`, or the agent's policy, the tools' and servers' own, and the mode given for the run. */
export function describeJournaledSandbox(journaled: unknown): string {
  if (journaled === undefined || journaled === "none") return "none";
  const parsed = RunSandboxSchema.safeParse(journaled);
  if (!parsed.success) return "unreadable";
  const { agent, tools, mcp_servers: servers, override } = parsed.data;
  const own = [...Object.entries(tools), ...Object.entries(servers)].map(([name, policy]) => `${name}: ${describePolicy(policy)}`);
  return [describePolicy(agent), ...(own.length > 0 ? [`own: ${own.join("; ")}`] : []), ...(override === undefined ? [] : [`--sandbox ${override}`])].join(" · ");
}
