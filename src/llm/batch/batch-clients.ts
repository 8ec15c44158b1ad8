// The batch client of a run's endpoint: its batch API, spoken with the protocol's own key headers at the base URL the run uses.
import type { BatchApi } from "../../journal/events.js";
import { protocolOf, type ProviderAccess } from "../provider-choice.js";
import type { ProviderName } from "../types.js";
import type { BatchClient } from "./batch-client.js";
import { anthropicBatchClient } from "./anthropic-batch.js";
import { openAiBatchClient } from "./openai-batch.js";

export async function batchClientFor(api: BatchApi, protocol: ProviderName, access: ProviderAccess, secrets: readonly string[]): Promise<BatchClient> {
  const { headers } = await protocolOf(protocol);
  const endpoint = { baseUrl: access.baseUrl, headers: headers(access.apiKey), env: access.env };
  if (api === "anthropic") return anthropicBatchClient(endpoint, secrets);
  return openAiBatchClient(endpoint, protocol === "openai-responses" ? "/v1/responses" : "/v1/chat/completions", secrets);
}
