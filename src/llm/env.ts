// Finds the provider, its API key and base URL: workspace .env > agent .env > project-root .env > process environment.
import { existsSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { FileRefusedError, UntrustedEndpointError, errorMessage } from "../errors.js";
import { readFolderFileIfThere } from "../safe-open.js";
import { urlCredentials, withoutUrlCredentials } from "../secrets.js";
import { parseDotenv } from "./dotenv.js";

/** Variables that hold a model provider's key. */
const PROVIDER_KEY_VARIABLES = ["DELTA_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"] as const;

/** Variables that name a model provider's endpoint (and may carry credentials in it). */
const PROVIDER_URL_VARIABLES = ["DELTA_BASE_URL", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"] as const;

/** Every variable that says which provider the engine calls and how: the keys, the base URLs, DELTA_PROVIDER and DELTA_MODEL. */
export const PROVIDER_VARIABLES: readonly string[] = [...PROVIDER_KEY_VARIABLES, ...PROVIDER_URL_VARIABLES, "DELTA_PROVIDER", "DELTA_MODEL"];

export interface ProviderEnv {
  /** DELTA_PROVIDER: overrides llm.provider in agent.yaml (checked by the caller). */
  provider?: string;
  apiKey?: string;
  /** The variable the key was read from, e.g. DELTA_API_KEY. */
  apiKeyName?: string;
  baseUrl?: string;
  /** The variable the base URL was read from, e.g. DELTA_BASE_URL. */
  baseUrlName?: string;
  /** DELTA_MODEL: overrides llm.model in agent.yaml (the --model flag overrides it in turn). */
  model?: string;
  /** Where each found value came from, e.g. "DELTA_API_KEY from /w/.env": what -v, ENGINE_START and a failed call's message name. */
  sourceOf: { provider?: string; apiKey?: string; baseUrl?: string; model?: string };
  /**
   * Every value any key variable has in any layer, used or not, and the credentials written into a
   * base URL or a proxy URL: the run's secrets, kept out of everything it writes.
   */
  keys: string[];
  /** The .env file that set the key or the base URL, when a file did (not the environment). */
  fileOf: { apiKey?: string; baseUrl?: string };
  /** Every .env file consulted, in priority order, and whether it was there. */
  files: { path: string; found: boolean }[];
  /** Any variable's value by the same priority (a fallback's key_env), and where it came from; undefined when no layer sets it. */
  valueOf(name: string): { value: string; source: string } | undefined;
}

interface ProviderEnvInput {
  workDir: string;
  agentHome: string;
  processEnv: NodeJS.ProcessEnv;
  /** llm.provider from agent.yaml; DELTA_PROVIDER wins over it. It decides which vendor's key and base URL variables are read. */
  provider?: string;
  /** Told about .env lines that could not be read; they are skipped. */
  warn?: (message: string) => void;
}

// A vendor's own names come last so a DELTA_* value at any level wins over them.
const VENDOR_NAMES: Record<string, { apiKey: string; baseUrl: string }> = {
  anthropic: { apiKey: "ANTHROPIC_API_KEY", baseUrl: "ANTHROPIC_BASE_URL" },
};
const OPENAI_NAMES = { apiKey: "OPENAI_API_KEY", baseUrl: "OPENAI_BASE_URL" };
/** Proxies the engine and its children reach the network through; a user:password@ in them is a secret too. */
const PROXY_VARIABLES = ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"];

interface Layer {
  label: string;
  file: boolean;
  values: Record<string, string | undefined>;
}

/** Reads the layers without touching process.env; the first non-empty value wins. */
export function resolveProviderEnv(input: ProviderEnvInput): ProviderEnv {
  const warn = input.warn ?? (() => {});
  const layers: Layer[] = [];
  const files: ProviderEnv["files"] = [];
  for (const file of envFiles(input.workDir, input.agentHome)) {
    const values = readEnvFile(file, warn);
    files.push({ path: file, found: values !== undefined });
    if (values) layers.push({ label: file, values, file: true });
  }
  layers.push({ label: "the environment", values: input.processEnv, file: false });

  const sourceOf: ProviderEnv["sourceOf"] = {};
  const fileOf: ProviderEnv["fileOf"] = {};
  const pick = (names: readonly string[], what: keyof ProviderEnv["sourceOf"]): { name: string; value: string } | undefined => {
    for (const name of names) {
      for (const layer of layers) {
        const value = layer.values[name]?.trim();
        if (value) {
          sourceOf[what] = `${name} from ${layer.label}`;
          if (layer.file && (what === "apiKey" || what === "baseUrl")) fileOf[what] = layer.label;
          return { name, value };
        }
      }
    }
    return undefined;
  };
  const provider = pick(["DELTA_PROVIDER"], "provider");
  const vendor = VENDOR_NAMES[provider?.value ?? input.provider ?? ""] ?? OPENAI_NAMES;
  const apiKey = pick(["DELTA_API_KEY", vendor.apiKey], "apiKey");
  const baseUrl = pick(["DELTA_BASE_URL", vendor.baseUrl], "baseUrl");
  const model = pick(["DELTA_MODEL"], "model");
  const keys = new Set<string>();
  for (const layer of layers) {
    for (const name of PROVIDER_KEY_VARIABLES) if (layer.values[name]?.trim()) keys.add(layer.values[name].trim());
    for (const name of PROVIDER_URL_VARIABLES) for (const part of urlCredentials(layer.values[name]?.trim() ?? "")) keys.add(part);
  }
  for (const name of PROXY_VARIABLES) for (const part of urlCredentials(input.processEnv[name]?.trim() ?? "")) keys.add(part);
  return {
    ...(provider ? { provider: provider.value } : {}),
    ...(apiKey ? { apiKey: apiKey.value, apiKeyName: apiKey.name } : {}),
    ...(baseUrl ? { baseUrl: baseUrl.value, baseUrlName: baseUrl.name } : {}),
    ...(model ? { model: model.value } : {}),
    sourceOf,
    fileOf,
    keys: [...keys],
    files,
    valueOf(name) {
      for (const layer of layers) {
        const value = layer.values[name]?.trim();
        if (value) return { value, source: `${name} from ${layer.label}` };
      }
      return undefined;
    },
  };
}

/**
 * A workspace's `.env` can be written by the run's own tools: a base URL read from it is used only with the key read from
 * that same file, so a tool cannot send the user's key elsewhere. With no key at all there is nothing to send (the missing
 * key is refused on its own). The agent's and the project's `.env` keep the design's priority; `--base-url` is not checked.
 */
export function checkWorkspaceBaseUrl(env: ProviderEnv, workDir: string): void {
  const workspaceFile = join(resolve(workDir), ".env");
  if (env.fileOf.baseUrl !== workspaceFile || env.apiKey === undefined || env.fileOf.apiKey === workspaceFile) return;
  const urlName = env.baseUrlName ?? "DELTA_BASE_URL";
  const keyName = env.apiKeyName ?? "DELTA_API_KEY";
  throw new UntrustedEndpointError(
    `The model base URL ${withoutUrlCredentials(env.baseUrl ?? "")} comes from ${workspaceFile} (${urlName}), a file the run's tools can write, ` +
      `but the API key in use does not (${env.sourceOf.apiKey ?? keyName}): the key is not sent where a workspace file points. ` +
      `Either put the key beside the URL in ${workspaceFile} (${keyName}=…); or set ${urlName} in the environment or the agent's .env and remove it from ${workspaceFile}; ` +
      `or give --base-url <url> for this invocation.`,
  );
}

/** The .env files in priority order, each listed once even when two levels are the same folder. */
export function envFiles(workDir: string, agentHome: string): string[] {
  const root = findProjectRoot(resolve(agentHome));
  const folders = [resolve(workDir), resolve(agentHome), ...(root ? [root] : [])];
  return [...new Set(folders)].map((folder) => join(folder, ".env"));
}

/** The nearest folder at or above `start` that holds a `.git` entry (a folder, or a file in worktrees). */
export function findProjectRoot(start: string): string | undefined {
  for (let folder = start; ; folder = dirname(folder)) {
    if (existsSync(join(folder, ".git"))) return folder;
    if (dirname(folder) === folder) return undefined;
  }
}

/** A .env file larger than this is refused: a few keys and URLs, never megabytes (a planted /dev/zero or huge file must not grow the engine). */
const MAX_ENV_FILE_BYTES = 1 << 20;

/**
 * A .env file through the one safe open: no link out of its folder, a regular file (a FIFO never blocks),
 * bounded. One that cannot be read or is refused is skipped with a warning naming it and why.
 */
function readEnvFile(file: string, warn: (message: string) => void): Record<string, string> | undefined {
  let bytes: Buffer | null;
  try {
    bytes = readFolderFileIfThere({ path: file, folder: dirname(file), maxBytes: MAX_ENV_FILE_BYTES, what: "a .env file" });
  } catch (err) {
    if (isShownEmpty(file)) return undefined;
    warn(`${err instanceof FileRefusedError ? err.message : `${file}: cannot be read (${errorMessage(err)})`}; skipped`);
    return undefined;
  }
  if (bytes === null) return undefined;
  return parseDotenv(bytes.toString("utf8"), ({ line, message }) => warn(`${file}:${line}: ${message}; line skipped`));
}

/** True for a .env a box shows empty (/dev/null bound over it): an engine run by a boxed tool finds its .env files so. */
function isShownEmpty(file: string): boolean {
  try {
    const stats = statSync(file);
    return stats.isCharacterDevice() && stats.rdev === statSync("/dev/null").rdev;
  } catch {
    return false;
  }
}
