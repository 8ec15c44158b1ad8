// Redaction: a known secret never survives, credential-named fields are hidden, token counters are kept.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { MIN_SECRET_LENGTH, REDACTED, isSensitiveKey, redactSecrets, redactText, redactedJson, runSecrets, usableSecrets } from "../src/secrets.js";

const KEY = "sk-live-abcdef123456";

describe("redactSecrets", () => {
  it("replaces a known secret wherever it appears, in values and keys, at any depth", () => {
    const input = {
      headers: { "X-Custom": `Bearer ${KEY}` },
      messages: [{ role: "user", content: `my key is ${KEY}, again ${KEY}` }],
      [`weird-${KEY}`]: 1,
      nested: [[{ deep: KEY }]],
    };
    const output = redactSecrets(input, [KEY]);
    expect(JSON.stringify(output)).not.toContain(KEY);
    expect(output).toEqual({
      headers: { "X-Custom": `Bearer ${REDACTED}` },
      messages: [{ role: "user", content: `my key is ${REDACTED}, again ${REDACTED}` }],
      [`weird-${REDACTED}`]: 1,
      nested: [[{ deep: REDACTED }]],
    });
  });

  it("hides values under credential-named keys even when the secret is not known", () => {
    const output = redactSecrets(
      { Authorization: "Bearer other", "x-api-key": "k1", "api-key": "k2", Cookie: "c", client_secret: "s", dbPassword: "p", access_token: "t", authToken: "t2", "set-cookie": ["a", "b"], OPENAI_API_KEY: "k3" },
      [],
    );
    expect(Object.values(output as object).every((value) => value === REDACTED)).toBe(true);
  });

  it("keeps token counters and ordinary fields", () => {
    const usage = { max_tokens: 100, input_tokens: 5, output_tokens: 7, prompt_tokens: 1, completion_tokens: 2, total_tokens: 3, max_completion_tokens: 9, model: "m", key: "k" };
    expect(redactSecrets(usage, [])).toEqual(usage);
  });

  it("keeps an object under a secret-looking name, such as a tool's schema for a password parameter", () => {
    const schema = { properties: { password: { type: "string", description: "the password" } } };
    expect(redactSecrets(schema, [])).toEqual(schema);
  });

  it("returns a copy and leaves the input untouched", () => {
    const input = { content: KEY, list: [KEY] };
    redactSecrets(input, [KEY]);
    expect(input).toEqual({ content: KEY, list: [KEY] });
  });

  it("ignores empty secrets and replaces a longer secret whole before a shorter one inside it", () => {
    expect(redactText("abcdefgh-long abcdefgh", ["", "abcdefgh", "abcdefgh-long"])).toBe(`${REDACTED} ${REDACTED}`);
  });

  it("ignores keys shorter than MIN_SECRET_LENGTH, which would corrupt text rather than protect anything", () => {
    const short = "x".repeat(MIN_SECRET_LENGTH - 1);
    expect(redactText(`exit ${short}`, [short])).toBe(`exit ${short}`);
    expect(redactSecrets({ exit_code: 0, text: "x" }, ["x"])).toEqual({ exit_code: 0, text: "x" });
  });

  it("survives cycles", () => {
    const cyclic: Record<string, unknown> = { a: KEY };
    cyclic.self = cyclic;
    expect(redactSecrets(cyclic, [KEY])).toEqual({ a: REDACTED, self: "[Circular]" });
  });
});

describe("isSensitiveKey", () => {
  it("matches whole key names, not fragments of counters", () => {
    expect(["authorization", "api_key", "apiKey", "refresh_token", "token", "private_key", "AWS_SECRET_ACCESS_KEY"].every(isSensitiveKey)).toBe(true);
    expect(["max_tokens", "tokens", "tokenizer", "keyboard", "monkey", "passage"].some(isSensitiveKey)).toBe(false);
  });
});

describe("redactedJson", () => {
  const ESCAPED = 'sk"quoted\\key-0001';
  const keyArb = fc.constantFrom("content", "role", "password", "api_key", "max_tokens", "Authorization", "nested", "items", `weird-${KEY}`, "access_token");
  const textArb = fc.oneof(fc.string(), fc.constantFrom(KEY, `Bearer ${KEY}`, `a ${ESCAPED} b`, "plain"));
  const valueArb = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: "small" }, textArb, fc.integer(), fc.boolean(), fc.constant(null), tie("object"), tie("array")),
    object: fc.dictionary(keyArb, tie("value"), { maxKeys: 5 }),
    array: fc.array(tie("value"), { maxLength: 4 }),
  })).value;

  it("writes exactly what the copying redaction writes, for any record and secret list", () => {
    fc.assert(
      fc.property(valueArb, fc.subarray([KEY, ESCAPED, "short"]), (value, secrets) => {
        expect(redactedJson(value, secrets, 2)).toBe(JSON.stringify(redactSecrets(value, secrets), null, 2));
      }),
      { numRuns: 500 },
    );
  });

  it("leaves no known secret and no credential-named value in the text", () => {
    const text = redactedJson({ messages: [{ content: `key ${KEY}` }], params: { password: "hunter22", max_tokens: 10 }, [`k-${KEY}`]: 1 }, [KEY], 2);
    expect(text).not.toContain(KEY);
    expect(text).not.toContain("hunter22");
    expect(JSON.parse(text)).toMatchObject({ params: { password: REDACTED, max_tokens: 10 } });
  });
});

describe("usableSecrets", () => {
  it("sorts a run's frozen secrets once, and any other list again at every call, so a secret added to it is never missed", () => {
    const frozen = runSecrets(["short", KEY, `${KEY}-longer`]);
    expect(usableSecrets(frozen)).toEqual([`${KEY}-longer`, KEY]);
    expect(usableSecrets(frozen)).toBe(usableSecrets(frozen));
    expect(Object.isFrozen(usableSecrets(frozen))).toBe(true);
    const growing = [KEY];
    expect(redactText(`a ${KEY} b sk-added-later-0000`, growing)).toBe(`a ${REDACTED} b sk-added-later-0000`);
    growing.push("sk-added-later-0000");
    expect(redactText(`a ${KEY} b sk-added-later-0000`, growing)).toBe(`a ${REDACTED} b ${REDACTED}`);
  });
});
