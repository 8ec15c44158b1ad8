// Which proxy, if any, a model request goes through: the proxy variables read as curl reads them.
//
// curl's rules: `http_proxy` (lower case only: an upper-case HTTP_PROXY can be set by a web
// request's `Proxy:` header in CGI programs), `HTTPS_PROXY` / `https_proxy`, then `ALL_PROXY` /
// `all_proxy` for either; lower case wins over upper case. `NO_PROXY` / `no_proxy` lists hosts
// that go direct: `*` for all, a name matching itself and every name below it (a leading dot
// changes nothing), an IP address or a CIDR range. A proxy without a scheme is http://, and
// without a port uses 1080 (443 for https://), as curl does.
import { BlockList, isIP } from "node:net";
import { ConfigError } from "../../errors.js";

export type ProxyEnv = Readonly<Record<string, string | undefined>>;

/** The proxy for a request to `target`, or null to connect directly. */
export function proxyFor(target: URL, env: ProxyEnv): URL | null {
  const found = proxyVariable(target.protocol, env);
  if (!found) return null;
  if (bypassesProxy(target.hostname, pick(env, "no_proxy", "NO_PROXY")?.value ?? "")) return null;
  return parseProxy(found.name, found.value);
}

function proxyVariable(protocol: string, env: ProxyEnv): { name: string; value: string } | undefined {
  const specific = protocol === "https:" ? pick(env, "https_proxy", "HTTPS_PROXY") : pick(env, "http_proxy");
  return specific ?? pick(env, "all_proxy", "ALL_PROXY");
}

/** The first of the names that is set to something other than blanks. */
function pick(env: ProxyEnv, ...names: string[]): { name: string; value: string } | undefined {
  for (const name of names) {
    const value = env[name]?.trim();
    if (value) return { name, value };
  }
  return undefined;
}

function parseProxy(name: string, value: string): URL {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new ConfigError(`${name} is not a proxy URL (${JSON.stringify(redactUserinfo(value))}); set it like http://proxy.example.com:3128.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(`${name} names a ${url.protocol.slice(0, -1)} proxy; delta reaches model servers through HTTP proxies only (http:// or https://). Use one, or leave ${name} unset for delta.`);
  }
  if (url.port === "" && url.protocol === "http:") url.port = "1080";
  return url;
}

/** The port to dial: the URL's, or its scheme's default (the URL class leaves 443 out of https:// URLs). */
export function proxyPort(proxy: URL): number {
  return proxy.port === "" ? (proxy.protocol === "https:" ? 443 : 80) : Number(proxy.port);
}

/** True when `host` is listed in NO_PROXY's value. */
export function bypassesProxy(host: string, noProxy: string): boolean {
  const target = unbracket(host.toLowerCase()).replace(/\.$/, "");
  const family = isIP(target);
  for (const raw of noProxy.split(/[\s,]+/)) {
    const entry = unbracket(raw.trim().toLowerCase()).replace(/^\.+|\.+$/g, "");
    if (raw.trim() === "*") return true;
    if (entry === "") continue;
    if (family !== 0) {
      if (entry.includes("/") ? inRange(target, family, entry) : entry === target) return true;
      continue;
    }
    if (target === entry || target.endsWith(`.${entry}`)) return true;
  }
  return false;
}

function inRange(address: string, family: number, cidr: string): boolean {
  const [base, bits] = cidr.split("/");
  const baseFamily = isIP(base ?? "");
  const prefix = Number(bits);
  if (baseFamily !== family || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128)) return false;
  const kind = family === 4 ? "ipv4" : "ipv6";
  const list = new BlockList();
  list.addSubnet(base!, prefix, kind);
  return list.check(address, kind);
}

function unbracket(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

/** The headers a proxy needs for credentials given in its URL. */
export function proxyAuthorization(proxy: URL): Record<string, string> {
  if (proxy.username === "" && proxy.password === "") return {};
  const credentials = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
  return { "proxy-authorization": `Basic ${Buffer.from(credentials).toString("base64")}` };
}

/** The proxy URL without its password, for messages. */
function redactUserinfo(value: string): string {
  return value.replace(/\/\/[^/@]*@/, "//***@");
}
