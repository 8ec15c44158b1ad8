// Which model a run asks: --replay's recording, or --model, else DELTA_MODEL (a .env or the environment), else llm.model in agent.yaml.
import type { AgentPackage } from "../agent/load.js";
import type { Recording, ReplayCheckMode } from "../llm/replay.js";
import type { DriveOptions } from "./drive-options.js";

/** --replay for the provider's choice: the source as given, its recording read (run/replay-source.ts, loaded only then) when the choice asks, and how requests are checked against it. */
export function replayChoice(options: Pick<DriveOptions, "replay" | "replayCheck">): { source: string; load: () => Promise<Recording>; check?: ReplayCheckMode } | undefined {
  const { replay: source, replayCheck: check } = options;
  if (source === undefined) return undefined;
  return { source, load: async () => (await import("./replay-source.js")).loadRecording(source, check), ...(check === undefined ? {} : { check }) };
}

/** The agent with `model` in place of llm.model for this invocation; ENGINE_START and metadata.json record the model used. */
export function withModel(agent: AgentPackage, model: string | undefined): AgentPackage {
  return model === undefined || model === agent.llm.model ? agent : { ...agent, llm: { ...agent.llm, model } };
}

/** With -v, what is decided before the run has an engine.log (the .env files, the model) goes to stderr as [log] lines. */
export function verboseLog(options: Pick<DriveOptions, "verbose" | "progress">): ((line: string) => void) | undefined {
  return options.verbose ? (line) => options.progress(`[log] ${line}`) : undefined;
}
