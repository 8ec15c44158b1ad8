// The Anthropic Messages protocol as a WireProtocol: plain HTTP over our own client (the SDK cost 160 ms and 47 MB a run), its error types and their statuses.
import { DEFAULT_BASE_URLS } from "../base-url.js";
import { urlUnder, type ProviderConfig } from "../provider-settings.js";
import type { Provider } from "../types.js";
import { createProvider, type WireProtocol } from "../wire-protocol.js";
import { toLlmReply } from "./message-reply.js";
import { toMessagesBody } from "./request-body.js";
import { anthropicTextDelta, StreamAssembly } from "./stream-assembly.js";
import { toUsage } from "./wire-usage.js";

const API_VERSION = "2023-06-01";

export const anthropicProtocol: WireProtocol = {
  name: "anthropic",
  defaultBaseUrl: DEFAULT_BASE_URLS.anthropic,
  url: messagesUrl,
  headers: (apiKey) => ({ "x-api-key": apiKey, "anthropic-version": API_VERSION }),
  body: (request, { stream }) => toMessagesBody(request, { stream }),
  assembler: () => new StreamAssembly(),
  reply: toLlmReply,
  usage: toUsage,
  textDelta: anthropicTextDelta,
  // The status each error type stands for, so an error inside a 200 stream (overloaded_error) is retried as that status would be.
  errorStatus: {
    invalid_request_error: 400,
    authentication_error: 401,
    billing_error: 402,
    permission_error: 403,
    not_found_error: 404,
    request_too_large: 413,
    rate_limit_error: 429,
    api_error: 500,
    timeout_error: 504,
    overloaded_error: 529,
  },
  // Thinking blocks go back signed and unchanged, as Anthropic requires: nothing is sent back that a server may refuse.
  refusesEcho: () => false,
};

export function createAnthropicProvider(config: ProviderConfig, env: NodeJS.ProcessEnv = process.env): Provider {
  return createProvider(anthropicProtocol, config, env);
}

/** `<base>/v1/messages` (the base URL as Anthropic's own clients take it, ANTHROPIC_BASE_URL: without `/v1`); one that already ends in `/v1` (written the OpenAI way) gets `/messages`. */
function messagesUrl(base: URL): URL {
  return urlUnder(base, /\/v1\/?$/.test(base.pathname) ? "/messages" : "/v1/messages");
}
