// Advertises an expanded tool to the model as an OpenAI-style function with a JSON schema.
import type { FunctionTool } from "../conversation.js";
import type { ExpandedTool } from "./expand.js";

/** Whether the model must supply the parameter: required, and no default that could stand in for it. */
export function isRequiredForModel(parameter: ExpandedTool["parameters"][number]): boolean {
  return parameter.required && parameter.default === undefined;
}

export function toFunctionTool(tool: ExpandedTool): FunctionTool {
  const properties: Record<string, Record<string, string>> = {};
  const required: string[] = [];
  for (const parameter of tool.parameters) {
    const property: Record<string, string> = { type: "string" };
    if (parameter.description !== undefined) property.description = parameter.description;
    if (parameter.default !== undefined) property.default = parameter.default;
    properties[parameter.name] = property;
    if (isRequiredForModel(parameter)) required.push(parameter.name);
  }
  return {
    type: "function",
    function: {
      name: tool.name,
      description: tool.description,
      parameters: { type: "object", properties, required, additionalProperties: false },
    },
  };
}
