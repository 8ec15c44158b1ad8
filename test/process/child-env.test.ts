import { describe, expect, it } from "vitest";
import { childEnvironment } from "../../src/process/child-env.js";

const KEY = "sk-secret-key-1234";

describe("childEnvironment", () => {
  it("removes the variables its caller withholds and keeps everything else", () => {
    const env = childEnvironment({ SOME_KEY: KEY, OTHER_URL: "https://u:p@host", PATH: "/bin", EMPTY: "", GONE: undefined }, { withheld: ["SOME_KEY", "OTHER_URL", "NOT_SET"] });
    expect(env).toEqual({ PATH: "/bin", EMPTY: "" });
  });

  it("removes a variable holding the key in use whatever its name", () => {
    expect(childEnvironment({ MY_KEY: KEY, OTHER: "x" }, { withheld: [], secretValues: [KEY] })).toEqual({ OTHER: "x" });
  });

  it("matches a short key only by name, so unrelated variables with the same short value stay", () => {
    expect(childEnvironment({ DELTA_API_KEY: "ollama", MODEL_HOST: "ollama" }, { withheld: ["DELTA_API_KEY"], secretValues: ["ollama"] })).toEqual({ MODEL_HOST: "ollama" });
  });

  it("keeps a passed-on variable, with the value the engine resolved (a .env key) over the environment's", () => {
    expect(childEnvironment({ DELTA_API_KEY: "", MY_KEY: KEY }, { withheld: ["DELTA_API_KEY"], secretValues: [KEY], passthrough: ["DELTA_API_KEY"], resolved: { DELTA_API_KEY: KEY } })).toEqual({ DELTA_API_KEY: KEY });
    expect(childEnvironment({ OPENAI_API_KEY: "sk-o" }, { withheld: ["OPENAI_API_KEY"], passthrough: ["OPENAI_API_KEY", "NOT_SET"] })).toEqual({ OPENAI_API_KEY: "sk-o" });
  });
});
