// llm.fallback: the primary and its fallbacks as one provider. A call goes to the model that answered last in this process; one that stays overloaded or is retired hands the call to the next, each endpoint sent only its own reasoning state.
import { MADE_BY, type AssistantMessage, type ChatMessage, type LlmReply, type LlmRequest } from "../conversation.js";
import type { CallOptions, Provider } from "./types.js";
import { unavailableReason } from "./unavailable.js";

/** One model of the chain: the provider that reaches its endpoint, the endpoint as journaled, and the model asked (null: the request's own, the primary's). */
export interface ChainLink {
  provider: Provider;
  endpoint: { provider: string; base_url: string };
  model: string | null;
  /** Sampling fields this link's protocol does not take (the primary's llm.thinking for an OpenAI fallback): left out of its requests. */
  notTaken: readonly string[];
}

export function fallbackChain(links: readonly ChainLink[]): Provider {
  const [primary] = links;
  if (primary === undefined) throw new Error("a fallback chain needs its primary");
  // The model that answered last: a retired or overloaded primary is not asked again by this process.
  let current = 0;
  return {
    name: primary.provider.name,
    async complete(request: LlmRequest, options: CallOptions = {}): Promise<LlmReply> {
      for (let index = current; ; index += 1) {
        const link = links[index]!;
        const asked = askedOf(link, request, links);
        const answeredBy = { ...link.endpoint, model: asked.request.model };
        try {
          const reply = await link.provider.complete(asked.request, options);
          current = index;
          return { ...reply, answered_by: answeredBy, ...(asked.dropped > 0 ? { reasoning_dropped: asked.dropped } : {}) };
        } catch (err) {
          const why = unavailableReason(err);
          const next = links[index + 1];
          if (why === null || next === undefined || options.signal?.aborted || !(err instanceof Error)) throw err;
          options.onFallback?.({ from: answeredBy, to: { ...next.endpoint, model: next.model ?? request.model }, why, error: err });
        }
      }
    },
  };
}

/** The request as `link` is sent it: its model, the sampling fields its protocol takes, and no other endpoint's reasoning state. */
function askedOf(link: ChainLink, request: LlmRequest, links: readonly ChainLink[]): { request: LlmRequest; dropped: number } {
  const params = link.notTaken.length === 0 ? request.params : Object.fromEntries(Object.entries(request.params).filter(([field]) => !link.notTaken.includes(field)));
  // A chain of one model has no other endpoint's reasoning state to leave out: its messages go as they are, unread.
  if (links.length === 1) return { request: { ...request, model: link.model ?? request.model, params }, dropped: 0 };
  let dropped = 0;
  const messages = request.messages.map((message): ChatMessage => {
    if (message.role !== "assistant" || message.provider_data === undefined) return message;
    // A reply counts as the primary's unless a fallback of this chain made it: one journaled before fallbacks existed,
    // or by the primary at a base URL the run was moved from on purpose (--accept-endpoint, --base-url).
    const madeBy = links.find((other) => other !== links[0] && sameEndpoint(other.endpoint, message[MADE_BY]))?.endpoint ?? links[0]!.endpoint;
    if (sameEndpoint(madeBy, link.endpoint)) return message;
    dropped += 1;
    const { provider_data: _other, ...own } = message;
    return own satisfies AssistantMessage;
  });
  return { request: { ...request, model: link.model ?? request.model, messages: dropped > 0 ? messages : request.messages, params }, dropped };
}

function sameEndpoint(one: ChainLink["endpoint"], other: ChainLink["endpoint"] | undefined): boolean {
  return other !== undefined && one.provider === other.provider && one.base_url === other.base_url;
}
