// Types of cache-kept.mjs for what TypeScript tests import from it.
export interface CacheKept {
  kept: number;
  tokensSent: number;
  servable: number;
  changed: number;
  requests: number;
}
export function cacheKept(prompts: readonly string[]): CacheKept;
