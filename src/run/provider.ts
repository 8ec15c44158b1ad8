// Chooses the model for a run: a recorded conversation when replaying, else the OpenAI-compatible endpoint.
import type { AgentPackage } from "../agent/load.js";
import { MissingApiKeyError } from "../errors.js";
import type { Provider } from "../llm/types.js";

export interface ProviderChoice {
  provider: Provider;
  /** Values that must never reach a file: the API key. */
  secrets: string[];
  /** A description safe to record in ENGINE_START. */
  describe: { provider: string; base_url?: string; replay?: string };
}

export async function chooseProvider(agent: AgentPackage, workDir: string, options: { replay?: string; recordedThoughts: number; warn?: (line: string) => void }): Promise<ProviderChoice> {
  if (options.replay) {
    const { createReplayProvider } = await import("../llm/replay.js");
    return {
      provider: createReplayProvider(options.replay, { startIndex: options.recordedThoughts }),
      secrets: [],
      describe: { provider: "replay", replay: options.replay },
    };
  }
  const { resolveProviderEnv } = await import("../llm/env.js");
  const env = resolveProviderEnv({ workDir, agentHome: agent.home, processEnv: process.env, warn: (line) => options.warn?.(`[warning] ${line}`) });
  if (!env.apiKey) {
    throw new MissingApiKeyError(
      "No API key found. Set DELTA_API_KEY in the environment or in a .env file (workspace, agent directory or project root), " +
        "or run from a recording with --replay <file|run dir>.",
    );
  }
  const baseUrl = env.baseUrl ?? agent.llm.base_url;
  const { createOpenAiProvider } = await import("../llm/chat-completions/provider.js");
  return {
    provider: createOpenAiProvider({
      apiKey: env.apiKey,
      baseUrl,
      timeoutMs: agent.llm.timeout_ms ?? 120_000,
      maxRetries: agent.llm.max_retries ?? 3,
    }),
    secrets: [env.apiKey],
    describe: { provider: "openai-compatible", base_url: baseUrl },
  };
}
