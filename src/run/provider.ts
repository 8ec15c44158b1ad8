// Chooses the model for a run: a recorded conversation when replaying, else the OpenAI-compatible endpoint.
import type { AgentPackage } from "../agent/load.js";
import { LlmError, MissingApiKeyError, ReplayError, UsageError } from "../errors.js";
import type { Provider } from "../llm/types.js";

export interface ProviderChoice {
  provider: Provider;
  /** Values that must never reach a file: the API key. */
  secrets: string[];
  /** The key found (environment or .env) under the variable it was read from, for agents that pass it on to tools. */
  keyVariables: Record<string, string>;
  /** A description safe to record in ENGINE_START. */
  describe: { provider: string; base_url?: string; replay?: string; api_key_source?: string; base_url_source?: string };
  /** DELTA_MODEL, when a .env or the environment sets it. */
  model?: string;
}

export interface ProviderOptions {
  replay?: string;
  recordedThoughts: number;
  warn?: (line: string) => void;
  /** -v: told which .env files were consulted and where the key, base URL and model came from. */
  log?: (line: string) => void;
}

export async function chooseProvider(agent: AgentPackage, workDir: string, options: ProviderOptions): Promise<ProviderChoice> {
  const { resolveProviderEnv } = await import("../llm/env.js");
  const env = resolveProviderEnv({ workDir, agentHome: agent.home, processEnv: process.env, warn: (line) => options.warn?.(`[warning] ${line}`) });
  const model = env.model === undefined ? {} : { model: env.model };
  const keyVariables = env.apiKey !== undefined && env.apiKeyName !== undefined ? { [env.apiKeyName]: env.apiKey } : {};
  if (options.replay) {
    const { createReplayProvider } = await import("../llm/replay.js");
    return {
      provider: replayProvider(() => createReplayProvider(options.replay!, { startIndex: options.recordedThoughts }), options.replay),
      secrets: [],
      keyVariables,
      describe: { provider: "replay", replay: options.replay },
      ...model,
    };
  }
  for (const file of env.files) options.log?.(`.env: ${file.path} ${file.found ? "read" : "(none)"}`);
  for (const found of Object.values(env.sourceOf)) options.log?.(`.env: using ${found}`);
  if (!env.apiKey) {
    throw new MissingApiKeyError(
      "No API key found. Set DELTA_API_KEY in the environment or in a .env file (workspace, agent directory or project root), " +
        "or run from a recording with --replay <file|run dir>.",
    );
  }
  const { checkBaseUrl } = await import("../llm/base-url.js");
  const baseUrlSource = env.sourceOf.baseUrl ?? (agent.llm.base_url === undefined ? undefined : "llm.base_url in agent.yaml");
  const baseUrl = env.baseUrl ?? agent.llm.base_url;
  if (baseUrl !== undefined) checkBaseUrl(baseUrl, baseUrlSource ?? "base URL");
  const { createOpenAiProvider } = await import("../llm/chat-completions/provider.js");
  const describe = {
    provider: "openai-compatible",
    base_url: baseUrl,
    ...(env.sourceOf.apiKey === undefined ? {} : { api_key_source: env.sourceOf.apiKey }),
    ...(baseUrlSource === undefined ? {} : { base_url_source: baseUrlSource }),
  };
  const provider = createOpenAiProvider({
    apiKey: env.apiKey,
    baseUrl,
    timeoutMs: agent.llm.timeout_ms,
    maxRetries: agent.llm.max_retries,
    stream: agent.llm.stream,
    idleTimeoutMs: agent.llm.idle_timeout_ms,
  });
  return { provider: namingSources(provider, describe), secrets: [env.apiKey], keyVariables, describe, ...model };
}

/** A recording that cannot be read is a bad --replay flag: refused (126) before the run is created. */
function replayProvider(create: () => Provider, source: string): Provider {
  try {
    return create();
  } catch (err) {
    if (err instanceof ReplayError) throw new UsageError(`--replay ${source}: ${err.message}`, { cause: err });
    throw err;
  }
}

/**
 * A failed model call says where its key and base URL came from: a .env beats the environment
 * (spec 2.6.7), so a stale key in a forgotten .env is the usual cause of a 401 or a wrong endpoint.
 */
function namingSources(provider: Provider, describe: ProviderChoice["describe"]): Provider {
  const url = describe.base_url_source ?? "the default";
  const note = `(API key: ${describe.api_key_source ?? "unknown source"}; base URL: ${url}. Run with -v to see every .env consulted.)`;
  return {
    name: provider.name,
    async complete(request, options) {
      try {
        return await provider.complete(request, options);
      } catch (err) {
        if (err instanceof LlmError && !options?.signal?.aborted) throw new LlmError(`${err.message} ${note}`, { cause: err });
        throw err;
      }
    },
  };
}
