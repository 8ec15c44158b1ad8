// Which batch API a run's endpoint speaks (llm.batch, --batch), or the refusal (126) of an endpoint that has none.
import { ConfigError } from "../../errors.js";
import type { BatchApi } from "../../journal/events.js";
import type { ProviderName } from "../types.js";

/** The providers' own hosts, whose batch API is known; any other endpoint must say which it speaks. */
const KNOWN_HOSTS: Readonly<Record<string, BatchApi>> = { "api.openai.com": "openai", "api.anthropic.com": "anthropic" };

/** The batch API each protocol's requests can go through. */
const API_OF_PROTOCOL: Readonly<Record<ProviderName, BatchApi>> = { openai: "openai", "openai-responses": "openai", anthropic: "anthropic" };

/**
 * The batch API of `endpoint` when `setting` asks for batching (true: by its host; `openai`/`anthropic`: as the setting
 * says, for a gateway that speaks it); null when batching is off. `source` names where batching was asked for.
 */
export function batchApiFor(setting: boolean | BatchApi | undefined, endpoint: { provider: ProviderName; base_url: string }, source: string): BatchApi | null {
  if (setting === undefined || setting === false) return null;
  const wanted = API_OF_PROTOCOL[endpoint.provider];
  const api = setting === true ? KNOWN_HOSTS[new URL(endpoint.base_url).host] : setting;
  if (api === undefined) {
    throw new ConfigError(
      `${source} asks for the provider's batch API, but ${endpoint.base_url} is not OpenAI's or Anthropic's own endpoint, and servers such as vLLM, Ollama or LM Studio have no batch API. ` +
        `Run without batching, or, if this endpoint is a gateway that speaks one, say which in agent.yaml: llm.batch: ${wanted}.`,
    );
  }
  if (api !== wanted) {
    throw new ConfigError(`${source} names the ${api} batch API, but the run speaks the ${endpoint.provider} protocol, whose requests go through the ${wanted} batch API: set llm.batch: ${wanted} (or true).`);
  }
  return api;
}
