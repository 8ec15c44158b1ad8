// NODE_EXTRA_CA_CERTS without its start-up cost: certificates the launcher moved aside are trusted for HTTPS, parsed on first use.
//
// Node 20 parses the NODE_EXTRA_CA_CERTS bundle (and its own root store) at the start of every
// process, about 90 ms on a machine with a full CA bundle, whether or not the process ever opens
// a TLS connection. bin/delta.js, started as a shell script, moves the variable to
// DELTA_DEFERRED_CA_CERTS; this module gives it back to the environment the engine's child
// processes inherit and builds the TLS context with those certificates when a model call first needs it.
import { readFileSync } from "node:fs";
import type { SecureContext } from "node:tls";
import { errorMessage } from "../../errors.js";

const DEFERRED_CA_VARIABLE = "DELTA_DEFERRED_CA_CERTS";

let deferredFile: string | null = null;
/** undefined: not built yet; null: the file could not be used, so Node's default roots serve. */
let deferredContext: SecureContext | null | undefined;

/** Called once as the CLI starts, before any child process: NODE_EXTRA_CA_CERTS is back as the user set it. */
export function takeDeferredCaCerts(env: NodeJS.ProcessEnv = process.env): void {
  const file = env[DEFERRED_CA_VARIABLE];
  delete env[DEFERRED_CA_VARIABLE];
  if (file === undefined || file === "") return;
  env.NODE_EXTRA_CA_CERTS = file;
  deferredFile = file;
  deferredContext = undefined;
}

/**
 * The TLS context for HTTPS connections when certificates were deferred: Node's bundled roots plus
 * the file's, built once and shared by every connection. Undefined when nothing was deferred.
 * A file that cannot be used gets the warning Node itself would print, and the default roots.
 */
export async function deferredCaContext(warn: (text: string) => void = (text) => void process.stderr.write(text)): Promise<SecureContext | undefined> {
  if (deferredFile === null) return undefined;
  if (deferredContext === undefined) deferredContext = await buildContext(deferredFile, warn);
  return deferredContext ?? undefined;
}

async function buildContext(file: string, warn: (text: string) => void): Promise<SecureContext | null> {
  let pem: string;
  try {
    pem = readFileSync(file, "utf8");
  } catch (err) {
    warn(`Warning: Ignoring extra certs from \`${file}\`, load failed: ${errorMessage(err)}\n`);
    return null;
  }
  if (!pem.includes("-----BEGIN CERTIFICATE-----")) {
    warn(`Warning: Ignoring extra certs from \`${file}\`, load failed: no certificate found\n`);
    return null;
  }
  const { createSecureContext, rootCertificates } = await import("node:tls");
  return createSecureContext({ ca: [...rootCertificates, pem] });
}
