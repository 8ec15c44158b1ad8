// Headers and FormData for the bundle: the openai SDK names these web globals on every request, and on Node 20 touching
// either loads undici (Node's fetch internals, about 40 ms of a cold start) although the engine sends its requests over node:http.
//
// scripts/build.mjs injects this module into the delta bundle, so the SDK's free references to
// `Headers` and `FormData` resolve here instead of to the globals. Under the test runner the SDK
// uses Node's own classes; httpFetch accepts both.

/** RFC 9110 token characters: what a header name may contain. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What a header value may not contain (the Fetch standard rejects NUL, CR and LF). */
const FORBIDDEN_VALUE = /[\0\r\n]/;
/** Leading and trailing HTTP whitespace, which the Fetch standard strips from values. */
const EDGE_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

export type HeadersInit = Iterable<readonly [string, string]> | Iterable<readonly string[]> | Record<string, string | readonly string[] | undefined>;

/**
 * The Fetch standard's Headers, as far as a client uses it: case-insensitive names, values
 * combined with ", " by get(), iteration sorted by name, set-cookie kept apart. Names and values
 * are validated as the standard does, so the same input fails here as it would with undici.
 */
export class Headers implements Iterable<[string, string]> {
  readonly #values = new Map<string, string[]>();

  constructor(init?: HeadersInit | null) {
    if (init === undefined || init === null) return;
    if (typeof (init as Iterable<unknown>)[Symbol.iterator] === "function") {
      for (const pair of init as Iterable<readonly string[]>) {
        if (pair.length !== 2) throw new TypeError("Headers: each header must be a [name, value] pair");
        this.append(pair[0]!, pair[1]!);
      }
      return;
    }
    for (const [name, value] of Object.entries(init as Record<string, string | readonly string[] | undefined>)) {
      if (value === undefined) continue;
      for (const one of typeof value === "string" ? [value] : value) this.append(name, one);
    }
  }

  append(name: string, value: string): void {
    const key = checkName(name);
    const list = this.#values.get(key);
    if (list) list.push(checkValue(name, value));
    else this.#values.set(key, [checkValue(name, value)]);
  }

  set(name: string, value: string): void {
    this.#values.set(checkName(name), [checkValue(name, value)]);
  }

  get(name: string): string | null {
    return this.#values.get(checkName(name))?.join(", ") ?? null;
  }

  getSetCookie(): string[] {
    return [...(this.#values.get("set-cookie") ?? [])];
  }

  has(name: string): boolean {
    return this.#values.has(checkName(name));
  }

  delete(name: string): void {
    this.#values.delete(checkName(name));
  }

  forEach(callback: (value: string, name: string, headers: Headers) => void, thisArg?: unknown): void {
    for (const [name, value] of this) callback.call(thisArg, value, name, this);
  }

  *entries(): IterableIterator<[string, string]> {
    for (const name of [...this.#values.keys()].sort()) {
      const values = this.#values.get(name)!;
      if (name === "set-cookie") for (const value of values) yield [name, value];
      else yield [name, values.join(", ")];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  get [Symbol.toStringTag](): string {
    return "Headers";
  }
}

function checkName(name: string): string {
  const text = String(name);
  if (!TOKEN.test(text)) throw new TypeError(`Headers: ${JSON.stringify(text)} is not a valid header name`);
  return text.toLowerCase();
}

function checkValue(name: string, value: string): string {
  const text = String(value).replace(EDGE_WHITESPACE, "");
  if (FORBIDDEN_VALUE.test(text)) throw new TypeError(`Headers: the value of ${JSON.stringify(name)} contains NUL, CR or LF`);
  return text;
}

/**
 * The SDK only asks whether a request body is a FormData (`body instanceof FormData`). The engine
 * sends JSON, and no FormData can exist before Node's lazy global has been read (which replaces
 * its accessor with the class), so the answer never needs undici loaded to find out.
 */
export class FormData {
  static [Symbol.hasInstance](value: unknown): boolean {
    const descriptor = Object.getOwnPropertyDescriptor(globalThis, "FormData");
    const loaded: unknown = descriptor && "value" in descriptor ? descriptor.value : undefined;
    return typeof loaded === "function" && value instanceof loaded;
  }
}
