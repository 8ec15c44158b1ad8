// The OpenAI-compatible Chat Completions provider: whole or streamed replies over our own HTTP client, and the shared retry loop.
import { DEFAULT_BASE_URLS } from "../base-url.js";
import { attemptOnce } from "../attempt.js";
import { providerSettings, urlUnder, type ProviderConfig } from "../provider-settings.js";
import { retryingProvider } from "../retry-loop.js";
import type { Provider } from "../types.js";
import { toLlmReply } from "./completion-reply.js";
import { echoedFields, toChatCompletionBody } from "./request-body.js";
import { chatTextDelta, StreamAssembly } from "./stream-assembly.js";

export type OpenAiProviderConfig = ProviderConfig;

export function createOpenAiProvider(config: OpenAiProviderConfig, env: NodeJS.ProcessEnv = process.env): Provider {
  const settings = providerSettings(config, DEFAULT_BASE_URLS.openai, (base) => urlUnder(base, "/chat/completions"), env);
  const { stream } = settings.attempt;
  return retryingProvider("openai-compatible", settings, (request, { signal, withoutEcho, onText }) =>
    attemptOnce(
      settings.attempt,
      {
        headers: { authorization: `Bearer ${settings.apiKey}` },
        body: toChatCompletionBody(request, { stream, withoutEcho }),
        assembler: () => new StreamAssembly(),
        toReply: (completion) => toLlmReply(completion, request.model),
        echoed: withoutEcho ? new Set() : echoedFields(request),
        textDelta: chatTextDelta,
      },
      signal,
      onText,
    ),
  );
}
