// A boxed process's environment: only the named variables, and the proxy's when the network is a host list.
import { describe, expect, it } from "vitest";
import { sandboxEnvironment } from "../../../src/process/sandbox/env.js";

const ENGINE = {
  PATH: "/usr/bin",
  HOME: "/home/u",
  LANG: "C.UTF-8",
  LC_ALL: "C.UTF-8",
  TERM: "xterm",
  TZ: "UTC",
  DELTA_RUN_ID: "r1",
  DELTA_CWD: "/w",
  AWS_SECRET_ACCESS_KEY: "aws-secret",
  GITHUB_TOKEN: "gh-token",
  NO_PROXY: "internal.example",
};

describe("sandboxEnvironment", () => {
  it("keeps PATH, HOME, locale, TERM, TZ and the run variables, and drops everything else", () => {
    const env = sandboxEnvironment(ENGINE, []);
    expect(env).toEqual({ PATH: "/usr/bin", HOME: "/home/u", LANG: "C.UTF-8", LC_ALL: "C.UTF-8", TERM: "xterm", TZ: "UTC", DELTA_RUN_ID: "r1", DELTA_CWD: "/w", DELTA_SANDBOX: "1" });
  });

  it("keeps what env_passthrough names", () => {
    expect(sandboxEnvironment(ENGINE, ["GITHUB_TOKEN"]).GITHUB_TOKEN).toBe("gh-token");
  });

  it("points every proxy variable at the box's proxy and clears NO_PROXY", () => {
    const env = sandboxEnvironment(ENGINE, ["NO_PROXY"], "http://127.0.0.1:3128");
    for (const name of ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"]) expect(env[name]).toBe("http://127.0.0.1:3128");
    expect(env.NO_PROXY).toBeUndefined();
  });
});
