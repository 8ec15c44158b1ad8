// The proxy variables read as curl reads them: which variable, NO_PROXY matching, defaults, refusals.
import { describe, expect, it } from "vitest";
import { bypassesProxy, proxyFor, proxyPort } from "../../../src/llm/transport/proxy-env.js";

const https = new URL("https://api.example.com/v1/chat/completions");
const http = new URL("http://models.internal:8000/v1/chat/completions");

describe("proxyFor", () => {
  it("takes https_proxy before HTTPS_PROXY, then ALL_PROXY, for an https URL", () => {
    expect(proxyFor(https, { HTTPS_PROXY: "http://upper:3128", https_proxy: "http://lower:3128" })?.host).toBe("lower:3128");
    expect(proxyFor(https, { HTTPS_PROXY: "http://upper:3128" })?.host).toBe("upper:3128");
    expect(proxyFor(https, { ALL_PROXY: "http://all:8080" })?.host).toBe("all:8080");
    expect(proxyFor(https, { http_proxy: "http://plain:3128" })).toBeNull();
  });

  it("reads http_proxy for an http URL, but never upper-case HTTP_PROXY, as curl does", () => {
    expect(proxyFor(http, { http_proxy: "http://lower:3128" })?.host).toBe("lower:3128");
    expect(proxyFor(http, { HTTP_PROXY: "http://upper:3128" })).toBeNull();
    expect(proxyFor(http, { HTTP_PROXY: "http://upper:3128", all_proxy: "http://all:1" })?.host).toBe("all:1");
  });

  it("defaults the scheme to http:// and the port to 1080 (443 for https://)", () => {
    expect(proxyFor(https, { HTTPS_PROXY: "proxy.corp" })?.href).toBe("http://proxy.corp:1080/");
    expect(proxyPort(proxyFor(https, { HTTPS_PROXY: "https://proxy.corp" })!)).toBe(443);
    expect(proxyPort(proxyFor(https, { HTTPS_PROXY: "proxy.corp" })!)).toBe(1080);
  });

  it("ignores a blank variable and refuses a SOCKS proxy or a URL that is not one, naming the variable and hiding the password", () => {
    expect(proxyFor(https, { HTTPS_PROXY: "  " })).toBeNull();
    expect(() => proxyFor(https, { HTTPS_PROXY: "socks5://proxy:1080" })).toThrow(/HTTPS_PROXY names a socks5 proxy; .*http:\/\/ or https:\/\//);
    expect(() => proxyFor(https, { HTTPS_PROXY: "http://user:s3cret@[bad" })).toThrow(/HTTPS_PROXY is not a proxy URL \("http:\/\/\*\*\*@\[bad"\)/);
  });

  it("goes direct for hosts NO_PROXY lists", () => {
    expect(proxyFor(https, { HTTPS_PROXY: "http://p:1", NO_PROXY: "example.com" })).toBeNull();
    expect(proxyFor(https, { HTTPS_PROXY: "http://p:1", no_proxy: "other.com", NO_PROXY: "example.com" })?.host).toBe("p:1");
  });
});

describe("bypassesProxy", () => {
  it("matches a name, every name below it, with or without a leading dot, case-insensitively", () => {
    expect(bypassesProxy("api.example.com", "example.com")).toBe(true);
    expect(bypassesProxy("example.com", ".example.com")).toBe(true);
    expect(bypassesProxy("API.Example.COM", "localhost, .EXAMPLE.com")).toBe(true);
    expect(bypassesProxy("notexample.com", "example.com")).toBe(false);
    expect(bypassesProxy("example.com.evil.org", "example.com")).toBe(false);
  });

  it("matches * alone, IP addresses exactly, and CIDR ranges", () => {
    expect(bypassesProxy("anything.org", "*")).toBe(true);
    expect(bypassesProxy("127.0.0.1", "localhost,127.0.0.1")).toBe(true);
    expect(bypassesProxy("10.1.2.3", "10.0.0.0/8")).toBe(true);
    expect(bypassesProxy("11.1.2.3", "10.0.0.0/8")).toBe(false);
    expect(bypassesProxy("[::1]", "::1")).toBe(true);
    expect(bypassesProxy("fd00::5", "fd00::/8")).toBe(true);
    expect(bypassesProxy("127.0.0.2", "127.0.0.1")).toBe(false);
  });

  it("lists may be separated by commas or spaces, and empty entries match nothing", () => {
    expect(bypassesProxy("b.org", "a.org b.org")).toBe(true);
    expect(bypassesProxy("c.org", ",, ,")).toBe(false);
  });
});
