// Chooses the model for a run (the protocol, its key and endpoint, or a recording): a recorded conversation when replaying, else the provider agent.yaml or DELTA_PROVIDER names (Chat Completions, Anthropic Messages, OpenAI Responses).
import { ConfigError, LlmError, MissingApiKeyError, ReplayError, UsageError } from "../errors.js";
import type { AnsweredBy } from "../journal/events.js";
import type { ProviderEnv } from "./env.js";
import type { ChainLink } from "./fallback-chain.js";
import type { Recording, ReplayCheckMode, ReplayRun } from "./replay.js";
import type { LlmConfig } from "./settings-schema.js";
import { PROVIDER_NAMES, type Provider, type ProviderName } from "./types.js";
import type { WireProtocol } from "./wire-protocol.js";

/** What the choice reads of the agent: its llm block, its home (for a .env) and its agent.yaml (for messages). */
interface AgentLlm {
  llm: LlmConfig;
  home: string;
  configPath: string;
}

/** The endpoint a run talks to, as ENGINE_START records it: the protocol and the base URL without credentials. */
interface Endpoint {
  provider: ProviderName;
  base_url: string;
}

export interface ProviderChoice {
  /** The model this run's calls go to; a checked replay needs the run's facts and where to journal a divergence, known once the run is. */
  providerFor(run: ReplayRun): Provider;
  /** Values that must never reach a file: every API key found, the one used and the others. */
  secrets: string[];
  /** The key, base URL, DELTA_PROVIDER and DELTA_MODEL found (environment or .env) under the variables they were read from, for agents that pass them on to tools. */
  keyVariables: Record<string, string>;
  /** A description safe to record in ENGINE_START: the endpoint with no credentials in it. */
  describe: { provider: string; base_url?: string; replay?: string; replay_check?: ReplayCheckMode; api_key_source?: string; base_url_source?: string; endpoint?: Endpoint; fallback?: AnsweredBy[] };
  /** DELTA_MODEL, when a .env or the environment sets it. */
  model?: string;
  /** The protocol requests are made in (a replay: the one DELTA_PROVIDER or agent.yaml names), for the reply's room they carry. */
  protocol: ProviderName;
  /** The primary endpoint's base URL and key, for its batch API (llm.batch); absent for a replay. */
  access?: ProviderAccess;
}

/** What talking to the primary endpoint's other APIs takes: its base URL as given (credentials and all) and its key. */
export interface ProviderAccess {
  apiKey: string;
  baseUrl: string;
  env: NodeJS.ProcessEnv;
}

interface ProviderOptions {
  /**
   * --replay: the source as given (journaled, and named in messages) and its recording, loaded by the caller when asked;
   * `check`: each request compared with the recorded one (--until-divergence, --replay-strict).
   */
  replay?: { source: string; load: () => Promise<Recording>; check?: ReplayCheckMode };
  /** --base-url: this invocation's endpoint, over every other source. */
  baseUrl?: string;
  /** Told once which .env file set the endpoint or the key, when one did. */
  announce?: (line: string) => void;
  recordedThoughts: number;
  warn?: (line: string) => void;
  /** -v: told which .env files were consulted and where the key, base URL and model came from. */
  log?: (line: string) => void;
}

export async function chooseProvider(agent: AgentLlm, workDir: string, options: ProviderOptions): Promise<ProviderChoice> {
  const { resolveProviderEnv } = await import("./env.js");
  const env = resolveProviderEnv({
    workDir,
    agentHome: agent.home,
    processEnv: process.env,
    ...(agent.llm.provider === undefined ? {} : { provider: agent.llm.provider }),
    warn: (line) => options.warn?.(`[warning] ${line}`),
  });
  const model = env.model === undefined ? {} : { model: env.model };
  const keyVariables = {
    ...(env.apiKey !== undefined && env.apiKeyName !== undefined ? { [env.apiKeyName]: env.apiKey } : {}),
    ...(env.baseUrl !== undefined && env.baseUrlName !== undefined ? { [env.baseUrlName]: env.baseUrl } : {}),
    ...(env.provider !== undefined ? { DELTA_PROVIDER: env.provider } : {}),
    ...(env.model !== undefined ? { DELTA_MODEL: env.model } : {}),
  };
  if (options.replay) {
    const { source, check } = options.replay;
    const { createReplayProvider } = await import("./replay.js");
    const recording = await asUsageError(source, options.replay.load);
    // --until-divergence may go live: the model it would ask is chosen (and its key required) before anything runs.
    const live = check === "until-divergence" ? await liveForDivergence(agent, workDir, env, options) : null;
    const startIndex = options.recordedThoughts;
    return {
      providerFor: (run) => createReplayProvider(recording, { startIndex, ...(check === undefined ? {} : { check: { mode: check, live: live?.provider ?? null, run } }) }),
      // A key in a .env or the environment can still reach a tool's output: it stays out of every file.
      secrets: [...env.keys, ...(live?.secrets ?? [])],
      keyVariables,
      describe: { ...live?.describe, provider: "replay", replay: source, ...(check === undefined ? {} : { replay_check: check }) },
      ...model,
      // What the recorded run spoke, as far as agent.yaml and DELTA_PROVIDER say: its requests' reply room shapes the windows replayed.
      protocol: live?.protocol ?? PROVIDER_NAMES.find((known) => known === env.provider) ?? agent.llm.provider ?? "openai",
    };
  }
  const chosen = await liveProvider(agent, workDir, env, options);
  return { providerFor: () => chosen.provider, secrets: [...env.keys, ...chosen.secrets], keyVariables, describe: chosen.describe, ...model, protocol: chosen.protocol, access: chosen.access };
}

/**
 * The model a run asks: the protocol agent.yaml or DELTA_PROVIDER names, its key and endpoint, then llm.fallback's models in
 * order (one provider: llm/fallback-chain.ts); refused (126) without a key. `secrets`: the fallbacks' keys.
 */
async function liveProvider(agent: AgentLlm, workDir: string, env: ProviderEnv, options: ProviderOptions): Promise<{ provider: Provider; describe: ProviderChoice["describe"]; protocol: ProviderName; secrets: string[]; access: ProviderAccess }> {
  for (const file of env.files) options.log?.(`.env: ${file.path} ${file.found ? "read" : "(none)"}`);
  for (const found of Object.values(env.sourceOf)) options.log?.(`.env: using ${found}`);
  const { name, source } = providerName(agent, env);
  const { checkProtocolSettings, fieldsNotTaken } = await import("./protocol-settings.js");
  checkProtocolSettings(name, agent.llm, agent.configPath, source);
  if (!env.apiKey) {
    throw new MissingApiKeyError(
      `No API key found for the ${name} provider. Set DELTA_API_KEY${name === "anthropic" ? " (or ANTHROPIC_API_KEY)" : " (or OPENAI_API_KEY)"} in the environment or in a .env file ` +
        "(workspace, agent directory or project root), or run from a recording with --replay <file|run dir>.",
    );
  }
  const { checkWorkspaceBaseUrl } = await import("./env.js");
  if (options.baseUrl === undefined) checkWorkspaceBaseUrl(env, workDir);
  const { checkBaseUrl, DEFAULT_BASE_URLS, endpointUrl } = await import("./base-url.js");
  const baseUrlSource = options.baseUrl !== undefined ? "--base-url" : (env.sourceOf.baseUrl ?? (agent.llm.base_url === undefined ? undefined : "llm.base_url in agent.yaml"));
  const baseUrl = options.baseUrl ?? env.baseUrl ?? agent.llm.base_url;
  if (baseUrl !== undefined) checkBaseUrl(baseUrl, baseUrlSource ?? "base URL");
  const endpoint = { provider: name, base_url: endpointUrl(baseUrl ?? DEFAULT_BASE_URLS[name]) };
  announceEnvFiles(env, endpoint, options.baseUrl !== undefined, options.announce);
  const config = {
    apiKey: env.apiKey,
    ...(baseUrl === undefined ? {} : { baseUrl }),
    timeoutMs: agent.llm.timeout_ms,
    maxRetries: agent.llm.max_retries,
    maxRetryWaitMs: agent.llm.max_retry_wait_ms,
    stream: agent.llm.stream,
    idleTimeoutMs: agent.llm.idle_timeout_ms,
    replyBounds: {
      maxReplyMs: agent.llm.max_reply_ms,
      maxReplyBytes: agent.llm.max_reply_bytes,
      maxToolCalls: agent.llm.max_tool_calls,
      maxReplyDepth: agent.llm.max_reply_depth,
    },
  };
  const { createProvider } = await import("./wire-protocol.js");
  const sources = { api_key_source: env.sourceOf.apiKey, base_url_source: baseUrlSource };
  const primary: ChainLink = { provider: namingSources(createProvider(await protocolOf(name), config), sources), endpoint, model: null, notTaken: [] };
  const links = [primary];
  const secrets: string[] = [];
  for (const [index, entry] of (agent.llm.fallback ?? []).entries()) {
    if (typeof entry === "string") {
      links.push({ ...primary, model: entry });
      continue;
    }
    const key = env.valueOf(entry.key_env);
    if (key === undefined) {
      throw new MissingApiKeyError(`${agent.configPath}: llm.fallback[${index}] reads its API key from ${entry.key_env}, which neither the environment nor a .env file sets. Set ${entry.key_env}, or remove that fallback.`);
    }
    secrets.push(key.value);
    const fallbackUrl = entry.base_url ?? DEFAULT_BASE_URLS[entry.provider];
    checkBaseUrl(fallbackUrl, `llm.fallback[${index}].base_url in ${agent.configPath}`);
    const fallbackEndpoint = { provider: entry.provider, base_url: endpointUrl(fallbackUrl) };
    const provider = createProvider(await protocolOf(entry.provider), { ...config, apiKey: key.value, baseUrl: fallbackUrl });
    const fallbackSources = { api_key_source: key.source, base_url_source: entry.base_url === undefined ? undefined : `llm.fallback[${index}].base_url in ${agent.configPath}` };
    links.push({ provider: namingSources(provider, fallbackSources), endpoint: fallbackEndpoint, model: entry.model, notTaken: fieldsNotTaken(entry.provider, agent.llm) });
  }
  const describe = {
    provider: name === "openai" ? "openai-compatible" : name,
    ...(baseUrl === undefined ? {} : { base_url: endpointUrl(baseUrl) }),
    ...(env.sourceOf.apiKey === undefined ? {} : { api_key_source: env.sourceOf.apiKey }),
    ...(baseUrlSource === undefined ? {} : { base_url_source: baseUrlSource }),
    endpoint,
    ...(links.length > 1 ? { fallback: links.slice(1).map((link) => ({ ...link.endpoint, model: link.model ?? "" })) } : {}),
  };
  const { fallbackChain } = await import("./fallback-chain.js");
  return { provider: fallbackChain(links), describe, protocol: name, secrets, access: { apiKey: env.apiKey, baseUrl: baseUrl ?? DEFAULT_BASE_URLS[name], env: process.env } };
}

/** --until-divergence's live model, whose missing key is refused saying why a replay needs one. */
async function liveForDivergence(agent: AgentLlm, workDir: string, env: ProviderEnv, options: ProviderOptions): ReturnType<typeof liveProvider> {
  try {
    return await liveProvider(agent, workDir, env, options);
  } catch (err) {
    if (!(err instanceof MissingApiKeyError)) throw err;
    throw new MissingApiKeyError(
      `--until-divergence asks the model from the first request that differs from the recording, so it needs a key as a live run does. ${err.message} ` +
        "To check a recording with no key, use --replay-strict: the run stops FAILED (REPLAY_DIVERGED) where a request differs.",
      { cause: err },
    );
  }
}

/**
 * A .env file in a workspace can be written by the run's own tools: when one sets the endpoint or
 * the key, stderr says so, naming the file, so a redirected run is seen at once.
 */
function announceEnvFiles(env: ProviderEnv, endpoint: Endpoint, fromFlag: boolean, announce: ((line: string) => void) | undefined): void {
  const parts = [
    ...(env.fileOf.baseUrl !== undefined && !fromFlag ? [`base URL from ${env.fileOf.baseUrl}`] : []),
    ...(env.fileOf.apiKey !== undefined ? [`API key from ${env.fileOf.apiKey}`] : []),
  ];
  if (parts.length > 0) announce?.(`Model endpoint ${endpoint.base_url} (${endpoint.provider}): ${parts.join("; ")}`);
}

/** DELTA_PROVIDER (a .env or the environment), else llm.provider, else openai; an unknown name is refused with the choices. */
function providerName(agent: AgentLlm, env: ProviderEnv): { name: ProviderName; source: string } {
  if (env.provider === undefined) return { name: agent.llm.provider ?? "openai", source: agent.llm.provider === undefined ? "the default" : "llm.provider in agent.yaml" };
  const source = env.sourceOf.provider ?? "DELTA_PROVIDER";
  const name = PROVIDER_NAMES.find((known) => known === env.provider);
  if (!name) throw new ConfigError(`${source} is ${JSON.stringify(env.provider)}, which is not a provider; use one of ${PROVIDER_NAMES.join(", ")}.`);
  return { name, source };
}

/** Each protocol's module loads only when a run uses it: a run of one provider pays nothing for the others. */
export async function protocolOf(name: ProviderName): Promise<WireProtocol> {
  switch (name) {
    case "openai":
      return (await import("./chat-completions/provider.js")).chatCompletionsProtocol;
    case "anthropic":
      return (await import("./anthropic/provider.js")).anthropicProtocol;
    case "openai-responses":
      return (await import("./responses/provider.js")).responsesProtocol;
  }
}

/** A recording that cannot be read is a bad --replay flag: refused (126) before the run is created. */
async function asUsageError<T>(source: string, create: () => Promise<T>): Promise<T> {
  try {
    return await create();
  } catch (err) {
    if (err instanceof ReplayError) throw new UsageError(`--replay ${source}: ${err.message}`, { cause: err });
    throw err;
  }
}

/**
 * A failed model call says where its key and base URL came from: a .env beats the environment
 * (spec 2.6.7), so a stale key in a forgotten .env is the usual cause of a 401 or a wrong endpoint.
 */
function namingSources(provider: Provider, sources: { api_key_source: string | undefined; base_url_source: string | undefined }): Provider {
  const url = sources.base_url_source ?? "the default";
  const note = `(API key: ${sources.api_key_source ?? "unknown source"}; base URL: ${url}. Run with -v to see every .env consulted.)`;
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
