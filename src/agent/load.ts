// Loads an agent directory (agent.yaml, imports, hooks.yaml, context.yaml, prompt) into one validated AgentPackage.
import { access, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { ContextConfigSchema, type ContextConfig } from "../context/schema.js";
import { ConfigError, errorMessage } from "../errors.js";
import { HooksConfigSchema, type HooksConfig } from "../hooks/schema.js";
import type { ExpandedTool } from "../tools/expand.js";
import { collectTools } from "./imports.js";
import { AgentConfigSchema, type AgentConfig, type LlmConfig } from "./schema.js";
import { readYamlFile } from "./yaml-file.js";
import { parseWithSchema } from "./zod-issues.js";

export interface AgentPackage {
  /** realpath of the agent directory */
  home: string;
  /** agent.yaml (or legacy config.yaml), absolute */
  configPath: string;
  name: string;
  version?: string;
  description?: string;
  llm: LlmConfig;
  systemPromptPath: string;
  /** imports merged, local last, unique names */
  tools: ExpandedTool[];
  hooks: HooksConfig;
  context: ContextConfig;
}

export interface LoadOptions {
  warn?: (message: string) => void;
}

export const DEFAULT_CONTEXT_YAML = `sources:
  - type: file
    id: system_prompt
    path: '\${AGENT_HOME}/system_prompt.md'
  - type: file
    id: workspace_guide
    path: '\${CWD}/DELTA.md'
    on_missing: skip
  - type: journal
    id: conversation_history
`;

export async function loadAgent(agentHome: string, options: LoadOptions = {}): Promise<AgentPackage> {
  const warn = options.warn ?? (() => {});
  const home = await resolveHome(agentHome);
  const configPath = await findConfigFile(home, warn);
  const configFile = await readYamlFile(configPath, path.basename(configPath));
  const config = parseWithSchema(AgentConfigSchema, configFile);

  const systemPromptPath = path.resolve(home, config.system_prompt);
  if (!(await isFile(systemPromptPath))) {
    throw new ConfigError(
      `${configFile.display}: system_prompt: ${systemPromptPath} not found; create it or set system_prompt to a file path relative to the agent directory`,
    );
  }
  const tools = await collectTools(home, {
    absolutePath: configPath,
    display: configFile.display,
    imports: config.imports,
    tools: config.tools,
  });
  const hooks = await loadHooks(home, config, configFile.display, warn);
  const context = await loadContext(home);

  const agent: AgentPackage = { home, configPath, name: config.name, llm: config.llm, systemPromptPath, tools, hooks, context };
  if (config.version !== undefined) agent.version = config.version;
  if (config.description !== undefined) agent.description = config.description;
  return agent;
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

async function loadHooks(home: string, config: AgentConfig, configDisplay: string, warn: (message: string) => void): Promise<HooksConfig> {
  const hooksPath = path.join(home, "hooks.yaml");
  if (await isFile(hooksPath)) {
    if (config.lifecycle_hooks !== undefined) {
      warn(`[DEPRECATION WARNING] ${configDisplay}: lifecycle_hooks is ignored because hooks.yaml exists; move any missing hooks into hooks.yaml and delete lifecycle_hooks`);
    }
    // A hooks.yaml holding only comments means "no hooks", not an error.
    const file = await readYamlFile(hooksPath, "hooks.yaml", { allowEmpty: true });
    return parseWithSchema(HooksConfigSchema, file);
  }
  if (config.lifecycle_hooks !== undefined) {
    warn(`[DEPRECATION WARNING] ${configDisplay}: lifecycle_hooks is deprecated; move these hooks into hooks.yaml`);
    return config.lifecycle_hooks;
  }
  return {};
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
  return parseWithSchema(ContextConfigSchema, await readYamlFile(contextPath, "context.yaml"));
}

async function isFile(target: string): Promise<boolean> {
  try {
    await access(target);
    return (await stat(target)).isFile();
  } catch {
    return false;
  }
}
