// The OpenAI Responses provider: stateless requests with encrypted reasoning sent back, over our own HTTP client and the shared retry loop.
import { DEFAULT_BASE_URLS } from "../base-url.js";
import { attemptOnce } from "../attempt.js";
import type { AttemptFailure } from "../failure.js";
import { providerSettings, urlUnder, type ProviderConfig } from "../provider-settings.js";
import { retryingProvider } from "../retry-loop.js";
import type { Provider } from "../types.js";
import { toResponsesBody } from "./request-body.js";
import { toLlmReply } from "./response-reply.js";
import { responsesTextDelta, StreamAssembly } from "./stream-assembly.js";

export function createResponsesProvider(config: ProviderConfig, env: NodeJS.ProcessEnv = process.env): Provider {
  const settings = providerSettings(config, DEFAULT_BASE_URLS["openai-responses"], (base) => urlUnder(base, "/responses"), env);
  const { stream } = settings.attempt;
  return retryingProvider("openai-responses", settings, (request, { signal, withoutEcho, onText }) =>
    attemptOnce(
      settings.attempt,
      {
        headers: { authorization: `Bearer ${settings.apiKey}` },
        body: toResponsesBody(request, { stream, withoutReasoning: withoutEcho }),
        assembler: () => new StreamAssembly(),
        toReply: (response) => toLlmReply(response, request.model),
        reclassify: withoutEcho ? undefined : refusedReasoning,
        textDelta: responsesTextDelta,
      },
      signal,
      onText,
    ),
  );
}

/** A model without reasoning refuses the request for encrypted reasoning ("Encrypted content is not supported with this model"): sent again without it. */
function refusedReasoning(failure: AttemptFailure): AttemptFailure {
  return failure.kind === "refused" && /encrypted content|reasoning\.encrypted_content/i.test(failure.words?.message ?? "") ? { ...failure, kind: "echo-refused" } : failure;
}
