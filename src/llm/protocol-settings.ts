// Which agent.yaml llm settings each wire protocol has no use for: refused before the run starts, never silently dropped.
import { ConfigError } from "../errors.js";
import type { ProviderName } from "./types.js";

/** Per provider, a setting it does not take and what to do instead. */
const NOT_TAKEN: Record<ProviderName, Record<string, string>> = {
  openai: {
    thinking: "it is Anthropic's extended thinking; OpenAI reasoning models take llm.reasoning_effort",
  },
  anthropic: {
    presence_penalty: "the Messages API has no presence penalty",
    frequency_penalty: "the Messages API has no frequency penalty",
    seed: "the Messages API has no seed",
    reasoning_effort: "Claude thinks with llm.thinking: {budget_tokens: N}",
  },
  "openai-responses": {
    thinking: "it is Anthropic's extended thinking; reasoning models take llm.reasoning_effort",
    stop: "the Responses API has no stop sequences",
    seed: "the Responses API has no seed",
  },
};

/** Refuses (126) a setting in `llm` that `provider` does not take, naming the file, the field and the fix. */
export function checkProtocolSettings(provider: ProviderName, llm: Record<string, unknown>, configPath: string, providerSource: string): void {
  for (const [field, why] of Object.entries(NOT_TAKEN[provider])) {
    if (llm[field] === undefined) continue;
    throw new ConfigError(`${configPath}: llm.${field} is not a setting of the ${provider} provider (${providerSource}): ${why}. Remove it, or choose another llm.provider.`);
  }
}

/** The fields set in `llm` that `provider` does not take: a fallback of another protocol is sent its request without them. */
export function fieldsNotTaken(provider: ProviderName, llm: Record<string, unknown>): string[] {
  return Object.keys(NOT_TAKEN[provider]).filter((field) => llm[field] !== undefined);
}
