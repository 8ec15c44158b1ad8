// The Anthropic Messages provider: plain HTTP over our own client (the SDK cost 160 ms and 47 MB a run), the shared retry loop.
import { DEFAULT_BASE_URLS } from "../base-url.js";
import { attemptOnce } from "../attempt.js";
import { providerSettings, urlUnder, type ProviderConfig } from "../provider-settings.js";
import { retryingProvider } from "../retry-loop.js";
import type { Provider } from "../types.js";
import { toLlmReply } from "./message-reply.js";
import { toMessagesBody } from "./request-body.js";
import { anthropicTextDelta, StreamAssembly } from "./stream-assembly.js";

/** The base URL as Anthropic's own clients take it (ANTHROPIC_BASE_URL): without `/v1`. */const API_VERSION = "2023-06-01";

export function createAnthropicProvider(config: ProviderConfig, env: NodeJS.ProcessEnv = process.env): Provider {
  const settings = providerSettings(config, DEFAULT_BASE_URLS.anthropic, messagesUrl, env);
  const { stream } = settings.attempt;
  return retryingProvider("anthropic", settings, (request, { signal, onText }) =>
    attemptOnce(
      settings.attempt,
      {
        headers: { "x-api-key": settings.apiKey, "anthropic-version": API_VERSION },
        body: toMessagesBody(request, { stream }),
        assembler: () => new StreamAssembly(),
        toReply: (message) => toLlmReply(message, request.model),
        textDelta: anthropicTextDelta,
      },
      signal,
      onText,
    ),
  );
}

/** `<base>/v1/messages`; a base URL that already ends in `/v1` (written the OpenAI way) gets `/messages`. */
function messagesUrl(base: URL): URL {
  return urlUnder(base, /\/v1\/?$/.test(base.pathname) ? "/messages" : "/v1/messages");
}
