// The two ways a 2xx reply can fail to be a reply, whatever the protocol: unusable, or an error in place of a reply.
import type { ServerWords } from "./server-words.js";

/** A reply that cannot be turned into an LlmReply; worth one more try, as gateways sometimes send one. */
export class UnusableReplyError extends Error {}

/** A 200 whose body (or stream) is an error, not a reply (OpenRouter, gateways, Anthropic's overloaded stream): the server's words and code. */
export class ErrorBodyError extends Error {
  constructor(readonly words: ServerWords) {
    super(words.message);
  }
}
