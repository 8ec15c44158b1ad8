// A wire protocol as one table of what sets it apart (URL, headers, body, stream, reply, usage, error codes, what it sent back), and the one provider every protocol runs through.
import type { LlmReply, LlmRequest } from "../conversation.js";
import type { Usage } from "../journal/events.js";
import { attemptOnce, type StreamAssembler } from "./attempt.js";
import type { ServerWords } from "./server-words.js";
import { isRecord } from "./is-record.js";
import { providerSettings, type ProviderConfig } from "./provider-settings.js";
import { retryingProvider } from "./retry-loop.js";
import type { SseEvent } from "./transport/sse.js";
import type { Provider } from "./types.js";

export interface WireProtocol {
  /** The provider's name in messages and ENGINE_START. */
  name: string;
  /** Where requests go when no base URL is set. */
  defaultBaseUrl: string;
  /** The request URL under a base URL. */
  url: (base: URL) => URL;
  /** The protocol's own headers: its key, its version. */
  headers: (apiKey: string) => Record<string, string>;
  /** The request body; `withoutEcho`: without what earlier replies asked to have sent back, once the server refused it. */
  body: (request: LlmRequest, options: { stream: boolean; withoutEcho: boolean }) => unknown;
  /** A new assembler for the protocol's event stream. */
  assembler: () => StreamAssembler;
  /** The whole reply body as a reply, its usage aside; throws UnusableReplyError or ErrorBodyError when it is not one. */
  reply: (body: unknown, requestedModel: string) => Omit<LlmReply, "usage">;
  /** The reply's `usage` object as our Usage; null when the server sent none it could read. */
  usage: (wireUsage: unknown) => Usage | null;
  /** The reply text one event of the stream carries, if any, for a live view. */
  textDelta: (event: SseEvent) => string | undefined;
  /** The HTTP status each of the protocol's error codes stands for: an error sent in place of a reply is retried as that status would be. */
  errorStatus: Readonly<Record<string, number>>;
  /** True when the server's words refuse something this request sent back only because an earlier reply carried it: the request is then sent again without it. */
  refusesEcho: (request: LlmRequest, words: ServerWords) => boolean;
}

const NOTHING_REFUSED = (): boolean => false;

/** A provider speaking `protocol`: settings checked now (126 for what cannot work), attempts made from the protocol's table, the shared retry loop around them. */
export function createProvider(protocol: WireProtocol, config: ProviderConfig, env: NodeJS.ProcessEnv = process.env): Provider {
  const settings = providerSettings(config, protocol.defaultBaseUrl, protocol.url, env);
  const { stream } = settings.attempt;
  const headers = protocol.headers(settings.apiKey);
  return retryingProvider(protocol.name, settings, (request, { signal, withoutEcho, onText }) =>
    attemptOnce(
      settings.attempt,
      {
        headers,
        body: protocol.body(request, { stream, withoutEcho }),
        assembler: protocol.assembler,
        toReply: (body) => {
          const { content, tool_calls, ...rest } = protocol.reply(body, request.model);
          return { content, tool_calls, usage: protocol.usage(isRecord(body) ? body.usage : undefined), ...rest };
        },
        reading: { errorStatus: protocol.errorStatus, refusesEcho: withoutEcho ? NOTHING_REFUSED : (words) => protocol.refusesEcho(request, words) },
        textDelta: protocol.textDelta,
      },
      signal,
      onText,
    ),
  );
}
