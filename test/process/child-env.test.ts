import { describe, expect, it } from "vitest";
import { childEnvironment } from "../../src/process/child-env.js";

const KEY = "sk-secret-key-1234";

describe("childEnvironment", () => {
  it("removes the provider key variables and keeps everything else", () => {
    const env = childEnvironment({ DELTA_API_KEY: KEY, OPENAI_API_KEY: "sk-o", ANTHROPIC_API_KEY: "sk-a", PATH: "/bin", EMPTY: "", GONE: undefined });
    expect(env).toEqual({ PATH: "/bin", EMPTY: "" });
  });

  it("removes a variable holding the key in use whatever its name", () => {
    expect(childEnvironment({ MY_KEY: KEY, OTHER: "x" }, { secretValues: [KEY] })).toEqual({ OTHER: "x" });
  });

  it("matches a short key only by name, so unrelated variables with the same short value stay", () => {
    expect(childEnvironment({ DELTA_API_KEY: "ollama", MODEL_HOST: "ollama" }, { secretValues: ["ollama"] })).toEqual({ MODEL_HOST: "ollama" });
  });

  it("keeps a passed-on variable, with the value the engine resolved (a .env key) over the environment's", () => {
    expect(childEnvironment({ DELTA_API_KEY: "", MY_KEY: KEY }, { secretValues: [KEY], passthrough: ["DELTA_API_KEY"], resolved: { DELTA_API_KEY: KEY } })).toEqual({ DELTA_API_KEY: KEY });
    expect(childEnvironment({ OPENAI_API_KEY: "sk-o" }, { passthrough: ["OPENAI_API_KEY", "NOT_SET"] })).toEqual({ OPENAI_API_KEY: "sk-o" });
  });

  it("removes every signal's OTLP headers and an OTLP endpoint carrying user:password@, keeping an endpoint without credentials and what env_passthrough names", () => {
    const parent = {
      OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=k",
      OTEL_EXPORTER_OTLP_LOGS_HEADERS: "x-api-key=k",
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://user:pass@collector:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://collector:4318/v1/traces",
      OTEL_SERVICE_NAME: "svc",
    };
    expect(childEnvironment(parent)).toEqual({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://collector:4318/v1/traces", OTEL_SERVICE_NAME: "svc" });
    expect(childEnvironment(parent, { passthrough: ["OTEL_EXPORTER_OTLP_ENDPOINT"] })).toMatchObject({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://user:pass@collector:4318" });
  });
});
