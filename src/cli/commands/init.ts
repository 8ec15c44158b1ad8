// `delta init [name]`: writes a new agent directory from one of the bundled templates.
import { cp, readdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { existsSync } from "node:fs";
import { parseDocument } from "yaml";
import { SCHEMA_KINDS, SCHEMA_MODELINE, schemaFileName, schemaModeline } from "../../agent/schema-files.js";
import { didYouMean } from "../../did-you-mean.js";
import { UsageError } from "../../errors.js";
import { probeSandbox } from "../../process/sandbox/probe.js";
import type { CliIo } from "../io.js";
import { DEFAULT_TEMPLATE, findTemplatesDir, listTemplates } from "../templates.js";
import { packageFolder } from "../package-dir.js";

interface InitOptions {
  name?: string;
  template?: string;
  /** Accepted for scripts; init never prompts anyway. */
  yes?: boolean;
  cwd: string;
}


export async function init(options: InitOptions, io: CliIo): Promise<number> {
  const templatesDir = findTemplatesDir();
  const available = listTemplates(templatesDir);
  if (options.name === undefined || options.name.trim() === "") {
    throw new UsageError(`delta init needs the name of the agent directory to create, e.g. delta init my-agent (templates: ${available.join(", ")}; pick one with -t)`);
  }
  const templateName = options.template ?? DEFAULT_TEMPLATE;
  if (!available.includes(templateName)) {
    throw new UsageError(`Unknown template '${templateName}'.${didYouMean(templateName, available)} Available templates: ${available.join(", ")}`);
  }
  const target = path.resolve(options.cwd, options.name);
  await refuseNonEmpty(target);

  await cp(path.join(templatesDir, templateName), target, { recursive: true, errorOnExist: true, force: false });
  await renameAgent(path.join(target, "agent.yaml"), path.basename(target));
  const unavailable = await probeSandbox();
  await addSandbox(path.join(target, "agent.yaml"), unavailable === null ? null : unavailable.detail);
  await pointAtSchemas(target);
  await ignoreWorkspaces(target);

  const shown = path.relative(options.cwd, target) || ".";
  io.err(
    `Created agent '${path.basename(target)}' in ${target} from template '${templateName}'.\n\n` +
      "Next steps:\n" +
      `  export DELTA_API_KEY=<your key>        # or put it in ${path.join(shown, ".env")} (git-ignored); DELTA_BASE_URL for other endpoints\n` +
      `  delta run --agent ${shown} "Say hello"\n` +
      `  delta tool expand ${path.join(shown, "agent.yaml")}   # see how the tools expand\n` +
      (unavailable === null ? "" : `\nThe tools run unboxed: this machine cannot sandbox them (${unavailable.detail}); agent.yaml says how to turn the sandbox on once it can.\n`),
  );
  return 0;
}

async function refuseNonEmpty(target: string): Promise<void> {
  let info;
  try {
    info = await stat(target);
  } catch {
    return;
  }
  if (!info.isDirectory()) throw new UsageError(`${target} exists and is not a directory; choose another name`);
  if ((await readdir(target)).length > 0) {
    throw new UsageError(`${target} already exists and is not empty; choose another name or empty it first`);
  }
}

/** The templates' schema lines point into the package; from the new agent's folder they must point there too. */
async function pointAtSchemas(target: string): Promise<void> {
  const schemas = path.relative(target, packageFolder("schemas")) || ".";
  for (const kind of SCHEMA_KINDS) {
    const file = path.join(target, `${kind}.yaml`);
    if (!existsSync(file)) continue;
    const [first, ...rest] = (await readFile(file, "utf8")).split("\n");
    if (first === undefined || !SCHEMA_MODELINE.test(first)) continue;
    await writeFile(file, [schemaModeline(path.join(schemas, schemaFileName(kind)).split(path.sep).join("/")), ...rest].join("\n"));
  }
}

/**
 * Puts `sandbox: {mode: workspace-write}` before `tools:` where this machine can box tools, and the
 * same line commented out, with the reason, where it cannot.
 */
async function addSandbox(agentYamlPath: string, cannot: string | null): Promise<void> {
  const text = await readFile(agentYamlPath, "utf8");
  const block = cannot === null
    ? "# Every tool runs in a box: it writes only in its workspace, sees none of your secrets and reaches\n" +
      "# no network (docs/security.md). A tool that needs more gets its own sandbox: (write:, network:).\n" +
      "sandbox: {mode: workspace-write}\n\n"
    : `# This machine cannot box tools (${cannot}).\n` +
      "# Once it can, uncomment this to run every tool in a sandbox (docs/security.md):\n" +
      "# sandbox: {mode: workspace-write}\n\n";
  await writeFile(agentYamlPath, text.replace(/^tools:/m, `${block}tools:`));
}

/**
 * Runs land in the agent's workspaces/ (W001, W002…): whole conversations that do not belong in the agent's
 * repository; nor does the .env the next steps suggest for the key.
 */
async function ignoreWorkspaces(target: string): Promise<void> {
  const file = path.join(target, ".gitignore");
  if (existsSync(file)) return;
  await writeFile(
    file,
    "# Workspaces and their runs (.delta/): conversations, tool outputs, model requests\nworkspaces/\n" +
      "# The model's key and endpoint (DELTA_API_KEY=…), and any other .env here\n.env\n.env.*\n",
  );
}

/** Sets `name:` to the directory's name, keeping the template's comments. */
async function renameAgent(agentYamlPath: string, name: string): Promise<void> {
  const document = parseDocument(await readFile(agentYamlPath, "utf8"));
  document.set("name", name);
  await writeFile(agentYamlPath, document.toString());
}
