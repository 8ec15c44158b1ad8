// The OpenAI-compatible Chat Completions protocol as a WireProtocol: whole or streamed replies, and the reasoning extras servers want back recognised when a server refuses them.
import { DEFAULT_BASE_URLS } from "../base-url.js";
import { namesEchoedField } from "../failure.js";
import { urlUnder, type ProviderConfig } from "../provider-settings.js";
import type { Provider } from "../types.js";
import { createProvider, type WireProtocol } from "../wire-protocol.js";
import { toLlmReply } from "./completion-reply.js";
import { echoedFields, toChatCompletionBody } from "./request-body.js";
import { chatTextDelta, StreamAssembly } from "./stream-assembly.js";
import { toUsage } from "./wire-usage.js";

export type OpenAiProviderConfig = ProviderConfig;

export const chatCompletionsProtocol: WireProtocol = {
  name: "openai-compatible",
  defaultBaseUrl: DEFAULT_BASE_URLS.openai,
  url: (base) => urlUnder(base, "/chat/completions"),
  headers: (apiKey) => ({ authorization: `Bearer ${apiKey}` }),
  body: (request, options) => toChatCompletionBody(request, options),
  assembler: () => new StreamAssembly(),
  reply: toLlmReply,
  usage: toUsage,
  textDelta: chatTextDelta,
  // OpenAI's codes for an error sent in place of a completion; OpenRouter and vLLM put the status itself in `code`, read as it is.
  errorStatus: { rate_limit_exceeded: 429, server_error: 500 },
  // Groq: "property 'reasoning' is unsupported"; DeepSeek's first reasoner: "remove the reasoning_content".
  refusesEcho: (request, words) => namesEchoedField(words.message, echoedFields(request)),
};

export function createOpenAiProvider(config: OpenAiProviderConfig, env: NodeJS.ProcessEnv = process.env): Provider {
  return createProvider(chatCompletionsProtocol, config, env);
}
