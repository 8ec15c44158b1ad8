// The cache-kept measure: the share of each request that repeats the previous one from its start, and the tokens a cache could serve.
import { describe, expect, it } from "vitest";
import { cacheKept } from "../../bench/lib/cache-kept.mjs";

const message = (role: string, content: string) => ({ role, content });
const prompt = (...messages: object[]) => JSON.stringify(messages);
const system = message("system", "You are a benchmark agent.");
const observation = (n: number) => message("tool", `${n} ${"lorem ipsum ".repeat(200)}`);

describe("cacheKept", () => {
  it("counts a conversation that only grows as kept whole, but for the closing bracket", () => {
    const growing = [1, 2, 3, 4].map((n) => prompt(system, ...Array.from({ length: n }, (_, i) => observation(i))));
    const measured = cacheKept(growing);
    expect(measured.kept).toBeGreaterThan(0.999);
    expect(measured.changed).toBe(0);
    expect(measured.requests).toBe(4);
    // Request k repeats all k messages of request k − 1: 1 + 2 + 3 of the 1 + 2 + 3 + 4 observations, and the system prompt thrice.
    expect(measured.servable).toBeGreaterThan(0.55);
    expect(measured.servable).toBeLessThan(0.65);
  });

  it("counts a window that slides by one each request as keeping only the system prompt", () => {
    const sliding = [0, 1, 2, 3].map((n) => prompt(system, observation(n), observation(n + 1)));
    const measured = cacheKept(sliding);
    expect(measured.changed).toBe(3);
    expect(measured.kept).toBeLessThan(0.05);
    expect(measured.servable).toBeLessThan(0.02);
  });

  it("has nothing to keep with one request", () => {
    expect(cacheKept([prompt(system)])).toMatchObject({ kept: 1, servable: 0, changed: 0, requests: 1 });
  });
});
