// The bundle's Headers and FormData: the same answers as Node's own classes for everything the SDK and httpFetch do.
import { describe, expect, it } from "vitest";
import { FormData as EngineFormData, Headers as EngineHeaders } from "../../../src/llm/transport/web-globals.js";

type Step = (headers: Headers | EngineHeaders) => unknown;

/** Runs the same steps on Node's Headers and on ours; each step's result or thrown error type must match. */
function sameOnBoth(init: ConstructorParameters<typeof Headers>[0], steps: Step[]): void {
  const outcome = (make: () => Headers | EngineHeaders) => {
    let headers: Headers | EngineHeaders;
    try {
      headers = make();
    } catch (err) {
      return [`throws ${(err as Error).constructor.name}`];
    }
    return steps.map((step) => {
      try {
        const result = step(headers);
        return result === undefined ? [...headers.entries()] : result;
      } catch (err) {
        return `throws ${(err as Error).constructor.name}`;
      }
    });
  };
  expect(outcome(() => new EngineHeaders(init as never))).toEqual(outcome(() => new Headers(init)));
}

describe("Headers", () => {
  it("builds from records, pairs and another Headers, lower-casing names and sorting iteration", () => {
    sameOnBoth({ "X-B": "2", "content-type": "application/json", Authorization: "Bearer k" }, [(h) => [...h]]);
    sameOnBoth([["b", "1"], ["A", "2"], ["b", "3"]], [(h) => [...h], (h) => h.get("B")]);
    sameOnBoth(new Headers([["x-one", "1"]]), [(h) => [...h.keys()], (h) => [...h.values()]]);
  });

  it("appends, sets, deletes and combines repeated values with a comma", () => {
    sameOnBoth({}, [
      (h) => h.append("Accept", "a"),
      (h) => h.append("accept", "b"),
      (h) => h.get("ACCEPT"),
      (h) => h.set("accept", "c"),
      (h) => h.has("Accept"),
      (h) => h.delete("accept"),
      (h) => h.get("accept"),
      (h) => h.has("accept"),
    ]);
  });

  it("trims values and keeps set-cookie values apart", () => {
    sameOnBoth({}, [
      (h) => h.append("x-pad", "  padded\t"),
      (h) => h.append("set-cookie", "a=1"),
      (h) => h.append("set-cookie", "b=2"),
      (h) => h.getSetCookie(),
      (h) => h.get("set-cookie"),
    ]);
  });

  it("refuses invalid names and values as Node does", () => {
    sameOnBoth({}, [(h) => h.append("bad name", "x"), (h) => h.append("x", "a\r\nb"), (h) => h.get("bad:name"), (h) => h.set("ok", "fine")]);
    sameOnBoth([["only-one"]] as unknown as [string, string][], []);
  });

  it("calls forEach with value, name and the headers", () => {
    const seen: string[] = [];
    const headers = new EngineHeaders({ b: "2", a: "1" });
    headers.forEach((value, name, self) => seen.push(`${name}=${value}:${self === headers}`));
    expect(seen).toEqual(["a=1:true", "b=2:true"]);
  });
});

describe("FormData", () => {
  it("recognises no plain value, and a real FormData once Node's global has been read", () => {
    expect({} instanceof EngineFormData).toBe(false);
    expect(("body" as unknown) instanceof EngineFormData).toBe(false);
    const real = new FormData();
    expect(real instanceof EngineFormData).toBe(true);
  });
});
