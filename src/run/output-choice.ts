// The output schema of this invocation: --output-schema or the agent's for a new run, the journaled one for `continue`; and the native field the provider is sent for it.
import type { AgentPackage } from "../agent/load.js";
import { compileOutputSchema, OutputSchemaSchema, type StructuredOutput } from "../agent/output-schema.js";
import { RunRefusedError } from "../errors.js";
import type { EventOf } from "../journal/events.js";
import { nativeOutputFormat } from "../llm/structured-output.js";
import type { ProviderName } from "../llm/types.js";

/** The schema a run started with, from its first ENGINE_START: `continue` holds the run to it, whatever agent.yaml says now. */
export async function journaledOutput(start: EventOf<"ENGINE_START">): Promise<StructuredOutput | undefined> {
  const recorded = start.config.output_schema;
  if (recorded === undefined) return undefined;
  const parsed = OutputSchemaSchema.safeParse(recorded);
  if (!parsed.success) throw new RunRefusedError(`Run ${start.run_id}: the output_schema its ENGINE_START records is unreadable (${parsed.error.issues[0]?.message ?? "invalid"}); the run cannot be continued.`);
  return compileOutputSchema(parsed.data);
}

/** The agent with `output` as its schema and the native field for `protocol` decided; a schema the provider cannot enforce is said once. */
export function withOutput(agent: AgentPackage, output: StructuredOutput | undefined, protocol: ProviderName, warn: (line: string) => void): AgentPackage {
  if (output === undefined) {
    const { output: _none, ...rest } = agent;
    return rest;
  }
  const native = nativeOutputFormat(protocol, agent.llm.model, output.schema.schema);
  if (native.fallback !== null) warn(`[warning] ${native.fallback}`);
  return { ...agent, output: { ...output, format: native.format } };
}
