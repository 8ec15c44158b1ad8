// The OpenAI Responses protocol as a WireProtocol: stateless requests with encrypted reasoning sent back, and sent again without it when a model refuses it.
import { DEFAULT_BASE_URLS } from "../base-url.js";
import { urlUnder, type ProviderConfig } from "../provider-settings.js";
import type { Provider } from "../types.js";
import { createProvider, type WireProtocol } from "../wire-protocol.js";
import { toResponsesBody } from "./request-body.js";
import { toLlmReply } from "./response-reply.js";
import { responsesTextDelta, StreamAssembly } from "./stream-assembly.js";
import { toUsage } from "./wire-usage.js";

export const responsesProtocol: WireProtocol = {
  name: "openai-responses",
  defaultBaseUrl: DEFAULT_BASE_URLS["openai-responses"],
  url: (base) => urlUnder(base, "/responses"),
  headers: (apiKey) => ({ authorization: `Bearer ${apiKey}` }),
  body: (request, { stream, withoutEcho }) => toResponsesBody(request, { stream, withoutReasoning: withoutEcho }),
  assembler: () => new StreamAssembly(),
  reply: toLlmReply,
  usage: toUsage,
  textDelta: responsesTextDelta,
  // The status an error code inside a 200 stands for, so a failed response is retried as that status would be.
  errorStatus: { server_error: 500, rate_limit_exceeded: 429, vector_store_timeout: 504 },
  // A model without reasoning refuses the encrypted reasoning sent back ("Encrypted content is not supported with this model").
  refusesEcho: (_request, words) => /encrypted content|reasoning\.encrypted_content/i.test(words.message),
};

export function createResponsesProvider(config: ProviderConfig, env: NodeJS.ProcessEnv = process.env): Provider {
  return createProvider(responsesProtocol, config, env);
}
