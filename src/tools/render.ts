// Shows an expanded tool, and an MCP server's tool, the way `delta tool expand` prints them (spec 2.2.7).
import type { ExpandedTool } from "./expand.js";
import type { McpTool } from "./mcp/advertise.js";
import { isRequiredForModel } from "./function-schema.js";
import { describeLeadingDash } from "./leading-dash.js";

interface ToolView {
  name: string;
  description: string;
  command: string[];
  parameters: ParameterView[];
  timeout_ms?: number;
  effects?: string;
}

interface ParameterView {
  name: string;
  type: "string";
  description?: string;
  inject_as: string;
  position?: number;
  option_name?: string;
  default?: string;
  required: boolean;
  raw?: true;
  /** `refused`, or `allowed: <why>` (leading-dash.ts). */
  leading_dash?: string;
}

/**
 * exec shows each placeholder as `${name}`; shell shows the script and the fixed positionals
 * (parameters are identified by position, "$N" = position N-1); command shows the fixed argv.
 */
export function renderTool(tool: ExpandedTool): ToolView {
  const command = tool.argv.flatMap((entry) => {
    if ("literal" in entry) return [entry.literal];
    return tool.mode === "exec" ? [`\${${entry.param}}`] : [];
  });
  const view: ToolView = {
    name: tool.name,
    description: tool.description,
    command,
    parameters: tool.parameters.map((parameter) => ({
      name: parameter.name,
      type: parameter.type,
      ...(parameter.description !== undefined && { description: parameter.description }),
      inject_as: parameter.inject_as,
      ...(parameter.position !== undefined && { position: parameter.position }),
      ...(parameter.option_name !== undefined && { option_name: parameter.option_name }),
      ...(parameter.default !== undefined && { default: parameter.default }),
      // What the model is told: a parameter with a default is optional to it.
      required: isRequiredForModel(parameter),
      ...(parameter.raw && { raw: true as const }),
      ...(parameter.inject_as === "stdin" ? {} : { leading_dash: describeLeadingDash(parameter.leading_dash) }),
    })),
  };
  if (tool.timeout_ms !== undefined) view.timeout_ms = tool.timeout_ms;
  if (tool.effects !== undefined) view.effects = tool.effects;
  return view;
}

interface McpToolView {
  name: string;
  /** As ACTION_REQUEST records it: ["mcp", server, tool]. */
  command: string[];
  description: string;
  input_schema: Record<string, unknown>;
  effects?: string;
}

/** An MCP tool as `delta tool expand` prints it: its name and schema as the model is offered them. */
export function renderMcpTool(tool: McpTool): McpToolView {
  return { name: tool.name, command: ["mcp", tool.server, tool.tool], description: tool.description, input_schema: tool.inputSchema, ...(tool.effects !== undefined && { effects: tool.effects }) };
}
