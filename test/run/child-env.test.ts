import { describe, expect, it } from "vitest";
import { childEnvironment } from "../../src/process/child-env.js";
import { withheldVariables } from "../../src/run/child-env.js";

/** The environment a child of the engine starts from, as the run computes it (no secret values, no env_passthrough). */
function childOf(parent: NodeJS.ProcessEnv, passthrough: string[] = []): Record<string, string> {
  return childEnvironment(parent, { withheld: withheldVariables(parent), passthrough });
}

describe("withheldVariables", () => {
  it("withholds the provider's keys, base URLs, DELTA_PROVIDER and DELTA_MODEL and keeps everything else", () => {
    const parent = { DELTA_API_KEY: "k", OPENAI_API_KEY: "sk-o", ANTHROPIC_API_KEY: "sk-a", OPENAI_BASE_URL: "http://h", DELTA_PROVIDER: "openai", DELTA_MODEL: "m", PATH: "/bin", EMPTY: "", GONE: undefined };
    expect(childOf(parent)).toEqual({ PATH: "/bin", EMPTY: "" });
  });

  it("withholds every signal's OTLP headers and an OTLP endpoint carrying user:password@, keeping an endpoint without credentials and what env_passthrough names", () => {
    const parent = {
      OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=k",
      OTEL_EXPORTER_OTLP_LOGS_HEADERS: "x-api-key=k",
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://user:pass@collector:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://collector:4318/v1/traces",
      OTEL_SERVICE_NAME: "svc",
    };
    expect(childOf(parent)).toEqual({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://collector:4318/v1/traces", OTEL_SERVICE_NAME: "svc" });
    expect(childOf(parent, ["OTEL_EXPORTER_OTLP_ENDPOINT"])).toMatchObject({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://user:pass@collector:4318" });
  });
});
