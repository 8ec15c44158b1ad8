// The endpoints a run talks to (protocol and base URL without credentials: the primary's and llm.fallback's), as journaled in its ENGINE_START, and the rule that `continue` keeps to them.
import { z } from "zod";
import { EndpointChangedError } from "../errors.js";
import type { EngineStartConfig, EventOf } from "../journal/events.js";
import { DEFAULT_BASE_URLS, endpointUrl } from "../llm/base-url.js";
import { PROVIDER_NAMES } from "../llm/types.js";

const RunEndpointSchema = z.object({ provider: z.enum(PROVIDER_NAMES), base_url: z.string() });
type RunEndpoint = z.infer<typeof RunEndpointSchema>;

/** The endpoints a run is pinned to: its primary's, and its fallbacks' (none for a run started before llm.fallback). */
interface PinnedEndpoints extends RunEndpoint {
  fallback: RunEndpoint[];
}

/** The endpoints of the run's latest ENGINE_START (of `starts`, every one the journal holds) that named one; null for a run that only ever replayed recordings. */
export function journaledEndpoint(starts: readonly EventOf<"ENGINE_START">[]): PinnedEndpoints | null {
  for (let index = starts.length - 1; index >= 0; index -= 1) {
    const event = starts[index]!;
    const parsed = RunEndpointSchema.safeParse(event.config.endpoint ?? legacyEndpoint(event.config));
    if (!parsed.success) continue;
    const fallback = (event.config.fallback ?? []).flatMap((entry) => {
      const endpoint = RunEndpointSchema.safeParse(entry);
      return endpoint.success ? [{ provider: endpoint.data.provider, base_url: endpoint.data.base_url }] : [];
    });
    return { ...parsed.data, fallback };
  }
  return null;
}

/** A run started before ENGINE_START named its endpoint: rebuilt from the provider and base URL it recorded. */
function legacyEndpoint(config: EngineStartConfig): RunEndpoint | undefined {
  const provider = config.provider === "openai-compatible" ? "openai" : PROVIDER_NAMES.find((name) => name === config.provider);
  if (provider === undefined) return undefined;
  const baseUrl = config.base_url ?? DEFAULT_BASE_URLS[provider];
  try {
    return { provider, base_url: endpointUrl(baseUrl) };
  } catch {
    return undefined;
  }
}

interface EndpointChoice {
  runId: string;
  /** What this invocation would use. */
  endpoint: RunEndpoint | undefined;
  /** The endpoints of this invocation's llm.fallback, in order. */
  fallback: readonly { provider: string; base_url: string }[];
  /** --accept-endpoint, or --base-url given for this invocation: the change is on purpose. */
  accepted: boolean;
  /** Where this invocation's base URL came from, e.g. "DELTA_BASE_URL from /w/.env". */
  source: string | undefined;
}

/**
 * Refuses (126) a `continue` that would send the run, its conversation and a key, to another endpoint than its own: the
 * primary must be the one it started with, and each fallback one of the endpoints it pinned (a fallback that answered is one).
 */
export function checkRunEndpoint(previous: PinnedEndpoints | null, choice: EndpointChoice): void {
  const next = choice.endpoint;
  if (previous === null || next === undefined || choice.accepted) return;
  if (previous.provider === next.provider && previous.base_url === next.base_url) {
    const pinned = [previous, ...previous.fallback];
    const unpinned = choice.fallback.find((endpoint) => !pinned.some((known) => known.provider === endpoint.provider && known.base_url === endpoint.base_url));
    if (unpinned === undefined) return;
    throw new EndpointChangedError(
      `Run ${choice.runId} was started with the fallback endpoints ${previous.fallback.length === 0 ? "(none)" : previous.fallback.map(describe).join(", ")}, but this continue's llm.fallback would also send it to ${describe(unpinned)}. Nothing was sent. ` +
        "If agent.yaml's llm.fallback changed on purpose, continue with --accept-endpoint; else restore it.",
    );
  }
  throw new EndpointChangedError(
    `Run ${choice.runId} was started against ${describe(previous)}, but this continue would send it to ${describe(next)}` +
      `${choice.source === undefined ? "" : ` (set by ${choice.source})`}. Nothing was sent. ` +
      "If a file the run's tools can write (a workspace .env) changed the endpoint, remove that change; " +
      "to move the run on purpose, continue with --accept-endpoint, or name the endpoint with --base-url <url>.",
  );
}

function describe(endpoint: { provider: string; base_url: string }): string {
  return `${endpoint.base_url} (${endpoint.provider})`;
}
