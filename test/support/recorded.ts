// Real replies of real model servers (test/fixtures/recorded, see its README and manifest.json), served byte for byte by the scripted model server.
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { reply, type Step } from "./mock-llm.js";

export const RECORDED_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../fixtures/recorded");

export interface ManifestEntry {
  file: string;
  family: string;
  status: number;
  content_type: string;
  shows: string[];
  source: { repo: string; path: string; commit: string; entry: string };
  /** Response headers the recording kept beside the content type (Retry-After…). */
  headers?: Record<string, string>;
  request?: { file: string };
}

let manifest: ManifestEntry[] | undefined;

/** Every recorded exchange. */
export function recordedEntries(): ManifestEntry[] {
  manifest ??= JSON.parse(readFileSync(join(RECORDED_DIR, "manifest.json"), "utf8")) as ManifestEntry[];
  return manifest;
}

/** The manifest entry of a reply, named by its file with or without `.response.json`/`.response.sse`. */
export function recordedEntry(name: string): ManifestEntry {
  const entry = recordedEntries().find((candidate) => candidate.file === name || candidate.file.replace(/\.response\.(json|sse)$/, "") === name);
  if (!entry) throw new Error(`no recorded reply ${name} in ${RECORDED_DIR}/manifest.json`);
  return entry;
}

/** The recorded bytes of a reply. */
export function recordedBytes(name: string): Buffer {
  return readFileSync(join(RECORDED_DIR, recordedEntry(name).file));
}

/** A whole recorded body parsed as JSON, or the data payloads of a recorded stream, parsed. */
export function recordedJson(name: string): unknown {
  const entry = recordedEntry(name);
  const text = recordedBytes(name).toString("utf8");
  if (!entry.file.endsWith(".sse")) return JSON.parse(text);
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: ") && line !== "data: [DONE]")
    .map((line) => JSON.parse(line.slice(6)) as unknown);
}

/** The request body the server accepted before sending this reply, when it was recorded. */
export function recordedRequest(name: string): Record<string, unknown> {
  const entry = recordedEntry(name);
  if (!entry.request) throw new Error(`${name} has no recorded request`);
  return JSON.parse(readFileSync(join(RECORDED_DIR, entry.request.file), "utf8")) as Record<string, unknown>;
}

export type Compression = "gzip" | "deflate" | "deflate-raw" | "br";

/**
 * A step that answers with the recorded status, Content-Type, headers and body bytes. `compress` sends the
 * same bytes compressed, with the Content-Encoding a server would use: decoding must give them back.
 */
export function recordedStep(name: string, options: { compress?: Compression } = {}): Step {
  const entry = recordedEntry(name);
  const bytes = recordedBytes(name);
  const headers = { ...entry.headers, "content-type": entry.content_type };
  if (!options.compress) return reply.raw(entry.status, bytes, headers);
  const compressed = { gzip: gzipSync, deflate: deflateSync, "deflate-raw": deflateRawSync, br: brotliCompressSync }[options.compress](bytes);
  const coding = options.compress === "deflate-raw" ? "deflate" : options.compress;
  return reply.raw(entry.status, compressed, { ...headers, "content-encoding": coding });
}
