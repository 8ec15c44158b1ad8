// Loads an agent directory (agent.yaml, imports, hooks.yaml, context.yaml, prompt, skills) into one validated AgentPackage.
import { access, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { resolveSourcePath } from "../context/path-variables.js";
import { ContextConfigSchema, type ContextConfig } from "../context/schema.js";
import { ConfigError, errorMessage } from "../errors.js";
import { HooksConfigSchema, type HooksConfig } from "../hooks/schema.js";
import type { ExpandedTool } from "../tools/expand.js";
import type { McpServerConfig } from "../tools/mcp/schema.js";
import { LOAD_SKILL } from "../context/skills-listing.js";
import type { SandboxPolicy } from "../process/sandbox/policy-schema.js";
import { collectTools } from "./imports.js";
import { loadAgentOutputSchema, type StructuredOutput } from "./output-schema.js";
import type { LlmConfig } from "../llm/settings-schema.js";
import { AgentConfigSchema, type AgentConfig } from "./schema.js";
import { loadSkills, type Skill } from "./skills/scan.js";
import { readYamlFile } from "./yaml-file.js";
import { parseWithSchema } from "./zod-issues.js";
import { DEFAULT_CONTEXT_YAML } from "./default-context.js";

export interface AgentPackage {
  /** realpath of the agent directory */
  home: string;
  /** agent.yaml (or legacy config.yaml), absolute */
  configPath: string;
  name: string;
  version?: string;
  description?: string;
  llm: LlmConfig;
  /** imports merged, local last, unique names */
  tools: ExpandedTool[];
  /** MCP servers of agent.yaml and its imports, merged like tools; started by each process that runs the agent. */
  mcpServers: McpServerConfig[];
  /** Variables tools, hooks and generators get although the engine keeps them to itself (env_passthrough of agent.yaml and its imports). */
  envPassthrough: string[];
  /** agent.yaml's `sandbox:`, the box of every tool and stdio MCP server without its own; null runs them unboxed. */
  sandbox: SandboxPolicy | null;
  hooks: HooksConfig;
  /** Where the hooks were defined, as messages name it: the hooks.yaml path (as other errors name files), or agent.yaml's legacy lifecycle_hooks. */
  hooksFile: string;
  context: ContextConfig;
  /** The skills of context.yaml's `skills` sources; load_skill is offered when there is one. */
  skills: Skill[];
  /** Each `skills` source's listing, by its index in context.yaml. */
  skillListings: Map<number, string>;
  /** The schema the final answer must meet (output_schema, or --output-schema for one run), compiled. */
  output?: StructuredOutput;
  /** agent.yaml `io.requests`: how io/invocations/ keeps each request. */
  requestRecords: "parts" | "full";
}

interface LoadOptions {
  warn?: (message: string) => void;
}

export async function loadAgent(agentHome: string, options: LoadOptions = {}): Promise<AgentPackage> {
  const warn = options.warn ?? (() => {});
  const home = await resolveHome(agentHome);
  const configPath = await findConfigFile(home, warn);
  // Named by its path, not its bare name: a sub-agent has an agent.yaml too.
  const configFile = await readYamlFile(configPath, shownPath(configPath));
  const config = parseWithSchema(AgentConfigSchema, configFile);

  const systemPromptPath = path.resolve(home, config.system_prompt);
  const namesSystemPrompt = typeof configFile.data === "object" && configFile.data !== null && "system_prompt" in configFile.data;
  if (namesSystemPrompt && !(await isFile(systemPromptPath))) {
    throw new ConfigError(
      `${configFile.display}: system_prompt: ${systemPromptPath} not found; create it or set system_prompt to a file path relative to the agent directory`,
    );
  }
  const { tools, mcpServers, envPassthrough } = await collectTools(home, {
    absolutePath: configPath,
    display: configFile.display,
    imports: config.imports,
    tools: config.tools,
    mcp_servers: config.mcp_servers,
    env_passthrough: config.env_passthrough,
  });
  for (const note of tools.flatMap((tool) => tool.deprecations)) warn(note);
  const { hooks, hooksFile } = await loadHooks(home, config, configFile.display, warn);
  const context = await loadContext(home);
  if (namesSystemPrompt) checkSystemPromptRead(configFile.display, config.system_prompt, systemPromptPath, context, home);
  const { skills, listings: skillListings } = loadSkills(home, context);
  const shadowing = tools.find((tool) => tool.name === LOAD_SKILL);
  if (skills.length > 0 && shadowing) {
    throw new ConfigError(`${shadowing.source}: tool '${LOAD_SKILL}' has the name of the built-in tool that reads this agent's skills; rename it`);
  }

  const agent: AgentPackage = { home, configPath, name: config.name, llm: config.llm, tools, mcpServers, envPassthrough, sandbox: config.sandbox ?? null, hooks, hooksFile, context, skills, skillListings, requestRecords: config.io?.requests ?? "parts" };
  if (config.version !== undefined) agent.version = config.version;
  if (config.description !== undefined) agent.description = config.description;
  if (config.output_schema !== undefined) agent.output = await loadAgentOutputSchema(home, configFile.display, config.output_schema);
  return agent;
}

/**
 * context.yaml decides what the model sees, so a system_prompt it never reads would be silently
 * ignored: refused, with the source to add. (Sources under ${CWD} live in the workspace, not here.)
 */
function checkSystemPromptRead(configDisplay: string, given: string, promptPath: string, context: ContextConfig, home: string): void {
  const read = context.sources.flatMap((source) => (source.type === "file" && !source.path.includes("${CWD}") ? [source.path] : []));
  if (read.some((sourcePath) => resolveSourcePath(sourcePath, { AGENT_HOME: home, CWD: home }) === promptPath)) return;
  throw new ConfigError(
    `${configDisplay}: system_prompt: ${given} is not read by context.yaml, which decides what the model sees ` +
      `(its file sources read ${read.length > 0 ? read.join(", ") : "no agent file"}). ` +
      `Make it a source of context.yaml — e.g. "- type: file" with "path: '\${AGENT_HOME}/${path.relative(home, promptPath)}'" as the first source — or remove system_prompt from ${configDisplay}.`,
  );
}

async function resolveHome(agentHome: string): Promise<string> {
  let home: string;
  try {
    home = await realpath(agentHome);
  } catch (err) {
    throw new ConfigError(`Agent directory ${path.resolve(agentHome)} not found (${errorMessage(err)}); create one with \`delta init\``, { cause: err });
  }
  if (!(await stat(home)).isDirectory()) {
    throw new ConfigError(`${home} is not a directory; pass the agent directory (the one holding agent.yaml)`);
  }
  return home;
}

async function findConfigFile(home: string, warn: (message: string) => void): Promise<string> {
  const agentYaml = path.join(home, "agent.yaml");
  const configYaml = path.join(home, "config.yaml");
  const [hasAgentYaml, hasConfigYaml] = await Promise.all([isFile(agentYaml), isFile(configYaml)]);
  if (hasAgentYaml) {
    if (hasConfigYaml) warn(`[DEPRECATION WARNING] ${home} has both agent.yaml and config.yaml; using agent.yaml and ignoring config.yaml (delete it)`);
    return agentYaml;
  }
  if (hasConfigYaml) {
    warn("[DEPRECATION WARNING] config.yaml is deprecated; rename it to agent.yaml");
    return configYaml;
  }
  throw new ConfigError(`No agent.yaml in ${home}; point to an agent directory, or create one with \`delta init\``);
}

async function loadHooks(home: string, config: AgentConfig, configDisplay: string, warn: (message: string) => void): Promise<{ hooks: HooksConfig; hooksFile: string }> {
  const hooksPath = path.join(home, "hooks.yaml");
  if (await isFile(hooksPath)) {
    if (config.lifecycle_hooks !== undefined) {
      warn(`[DEPRECATION WARNING] ${configDisplay}: lifecycle_hooks is ignored because hooks.yaml exists; move any missing hooks into hooks.yaml and delete lifecycle_hooks`);
    }
    // A hooks.yaml holding only comments means "no hooks", not an error.
    const file = await readYamlFile(hooksPath, shownPath(hooksPath), { allowEmpty: true });
    return { hooks: parseWithSchema(HooksConfigSchema, file), hooksFile: file.display };
  }
  if (config.lifecycle_hooks !== undefined) {
    warn(`[DEPRECATION WARNING] ${configDisplay}: lifecycle_hooks is deprecated; move these hooks into hooks.yaml`);
    return { hooks: config.lifecycle_hooks, hooksFile: `${configDisplay}: lifecycle_hooks` };
  }
  return { hooks: {}, hooksFile: shownPath(hooksPath) };
}

async function loadContext(home: string): Promise<ContextConfig> {
  const contextPath = path.join(home, "context.yaml");
  if (!(await isFile(contextPath))) {
    throw new ConfigError(
      `context.yaml not found in ${home}\n\n` +
        "Delta Engine requires an explicit context.yaml file to define how\n" +
        "the agent's attention window is constructed.\n\n" +
        "Quick fix - Create context.yaml with default content:\n\n" +
        DEFAULT_CONTEXT_YAML,
    );
  }
  return parseWithSchema(ContextConfigSchema, await readYamlFile(contextPath, shownPath(contextPath)));
}

async function isFile(target: string): Promise<boolean> {
  try {
    await access(target);
    return (await stat(target)).isFile();
  } catch {
    return false;
  }
}

/** A file's path as the person running the command finds it: from the current directory when inside it, else absolute. */
function shownPath(absolutePath: string): string {
  const relative = path.relative(process.cwd(), absolutePath);
  return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative) ? relative : absolutePath;
}
