// The server's words from error bodies of every shape. Shapes no recording holds are built here from the servers' documented formats.
import { describe, expect, it } from "vitest";
import { SERVER_MESSAGE_LIMIT, serverWords, serverWordsOfText } from "../../src/llm/server-words.js";

describe("serverWords (mock-built bodies: no recording of these shapes exists)", () => {
  it("reads vLLM's {object: error, message}", () => {
    expect(serverWords({ object: "error", message: "The model `x` does not exist.", type: "NotFoundError", param: null, code: 404 })).toEqual({ message: "The model `x` does not exist." });
  });

  it("reads Gemini's error as a JSON array", () => {
    expect(serverWords([{ error: { code: 400, message: "Invalid JSON payload received.", status: "INVALID_ARGUMENT" } }])).toEqual({ message: "Invalid JSON payload received.", code: "INVALID_ARGUMENT", status: 400 });
  });

  it("reads {error: text} with TGI's error_type, FastAPI's detail, and errors lists", () => {
    expect(serverWords({ error: "Input validation error: `temperature` must be strictly positive", error_type: "validation" })).toEqual({ message: "Input validation error: `temperature` must be strictly positive", code: "validation" });
    expect(serverWords({ detail: "Not Found" })).toEqual({ message: "Not Found" });
    expect(serverWords({ detail: [{ loc: ["body", "model"], msg: "field required" }] })).toEqual({ message: "field required" });
    expect(serverWords({ errors: [{ message: "quota exceeded" }] })).toEqual({ message: "quota exceeded" });
  });

  it("finds nothing in a completion, and keeps a plain-text or HTML body as text, bounded", () => {
    expect(serverWords({ choices: [] })).toBeUndefined();
    expect(serverWordsOfText("<html>\n<body>502 Bad Gateway</body></html>")).toEqual({ message: "<html> <body>502 Bad Gateway</body></html>" });
    expect(serverWordsOfText("x".repeat(2000))!.message).toHaveLength(SERVER_MESSAGE_LIMIT + 1);
    expect(serverWordsOfText("  ")).toBeUndefined();
  });
});
