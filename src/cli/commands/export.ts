// `delta export`: a run's spans (or every run's of a workspace or an agent), rebuilt from the journals alone, to an OTLP collector or as an OTLP/JSON file.
import { EngineError, UsageError } from "../../errors.js";
import { withoutUrlCredentials } from "../../secrets.js";
import { runIdsIn } from "../../store/list-runs.js";
import { scopeWorkspaces } from "../../store/locate-run.js";
import { runPaths, type RunPaths } from "../../store/run-dir.js";
import type { RunId } from "../../store/run-id.js";
import { captureContentOf } from "../../trace/otel-env.js";
import { foldJournalSpans, type JournalSpanOptions, type TraceSpan } from "../../trace/span-fold.js";
import type { CliIo } from "../io.js";
import { optionalRunId, optionalString } from "../options.js";
import { checkOutputFile, writeOutputFile } from "../output-file.js";
import { findRun } from "../run-query.js";
import { runScope } from "../run-scope.js";
import { counted } from "../../plural.js";

const DEFAULT_ENDPOINT = "http://localhost:4318";
/**
 * Spans per OTLP/JSON request written by --format otlp-json: a longer trace becomes JSON Lines, one request per line, as
 * the OpenTelemetry file exporter writes them (and the collector's otlpjsonfile receiver reads them).
 */
const SPANS_PER_LINE = 1_000;

export async function exportCommand(runIdGiven: string | undefined, flags: Record<string, unknown>, io: CliIo): Promise<number> {
  const runId = optionalRunId("the run id", runIdGiven);
  const warn = (line: string): void => io.err(`[warning] ${line}\n`);
  const format = optionalString("--format", flags.format);
  const toCollector = Boolean(flags.otlp);
  if (format !== undefined && format !== "otlp-json") throw new UsageError(`--format ${format}: delta export writes otlp-json (or sends to a collector with --otlp).`);
  if (toCollector === (format !== undefined)) throw new UsageError("Say where the spans go: --otlp [--endpoint URL] sends them to a collector, --format otlp-json [-o FILE] writes them as OTLP/JSON.");
  if (!toCollector && flags.endpoint !== undefined) throw new UsageError("--endpoint goes with --otlp.");
  if (toCollector && flags.output !== undefined) throw new UsageError("-o/--output goes with --format otlp-json; --otlp sends the spans to a collector.");
  const file = format !== undefined && flags.output !== undefined ? checkOutputFile(optionalString("-o/--output", flags.output) ?? "") : undefined;
  const journals = await journalsOf(runId, flags, warn);
  const options = { captureContent: captureContentOf(process.env), warn };
  if (toCollector) return send(journals.map((paths) => paths.journal), options, flags, io);
  const { otlpJsonSerializer } = await import("../../trace/otlp-export.js");
  const serialize = await otlpJsonSerializer(process.env);
  let count = 0;
  // Written as the journals stream past, a request per SPANS_PER_LINE spans: no journal, span list or document is held whole.
  const write = (out: (text: string) => void): void => {
    let batch: TraceSpan[] = [];
    const flush = (): void => {
      out(`${serialize(batch)}\n`);
      count += batch.length;
      batch = [];
    };
    for (const paths of journals) {
      foldJournalSpans(paths.journal, options, (span) => {
        batch.push(span);
        if (batch.length === SPANS_PER_LINE) flush();
      });
    }
    if (batch.length > 0 || count === 0) flush();
  };
  if (file === undefined) {
    write((text) => io.data(text));
    return 0;
  }
  writeOutputFile(file, write);
  io.err(`Wrote ${counted(count, "span")} to ${file}\n`);
  return 0;
}

/** The journals a run id, --last, or (neither) a whole workspace or agent names. */
async function journalsOf(runId: RunId | undefined, flags: Record<string, unknown>, warn: (line: string) => void): Promise<RunPaths[]> {
  if (runId !== undefined || flags.last) return [(await findRun(runId, flags, warn)).paths];
  return scopeWorkspaces(await runScope(flags)).flatMap((workDir) => runIdsIn(workDir).map((id) => runPaths(workDir, id)));
}

/** Sends the journals' spans as they are folded, a batch at a time. */
async function send(journals: string[], options: JournalSpanOptions, flags: Record<string, unknown>, io: CliIo): Promise<number> {
  const { sendJournalSpans } = await import("../../trace/otlp-export.js");
  const { liveExportChoice } = await import("../../trace/otel-env.js");
  const given = optionalString("--endpoint", flags.endpoint);
  // --endpoint is a collector's base URL (/v1/traces is added) or its traces URL; else the OTEL_* environment's, else a local collector.
  const env = {
    ...process.env,
    OTEL_SDK_DISABLED: undefined,
    OTEL_TRACES_EXPORTER: undefined,
    OTEL_TRACES_SAMPLER: undefined,
    OTEL_EXPORTER_OTLP_ENDPOINT: process.env.OTEL_EXPORTER_OTLP_ENDPOINT || DEFAULT_ENDPOINT,
    ...(given !== undefined ? { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: tracesUrl(given) } : {}),
  };
  const choice = liveExportChoice(env, null);
  if (choice.kind !== "on") throw new UsageError(choice.kind === "refused" ? choice.warning.replace(/^\[warning\] /, "").replace("no spans are exported", "nothing was sent") : "Nothing to send to.");
  const { url, protocol, flushMs: timeoutMs } = choice.settings;
  const shown = withoutUrlCredentials(url);
  const sent = await sendJournalSpans(journals, { url, protocol, timeoutMs }, process.env, options);
  if (sent.failure !== null) throw new EngineError(`Could not send the spans to ${shown} (${sent.spans} sent before it stopped): ${sent.failure}`);
  io.err(`Sent ${counted(sent.spans, "span")} to ${shown}\n`);
  return 0;
}

function tracesUrl(endpoint: string): string {
  let parsed: URL;
  try {
    parsed = new URL(endpoint);
  } catch {
    throw new UsageError(`--endpoint ${endpoint}: not a URL; give the collector's OTLP/HTTP address, e.g. ${DEFAULT_ENDPOINT}`);
  }
  return parsed.pathname.endsWith("/v1/traces") ? parsed.href : `${parsed.href.replace(/\/+$/, "")}/v1/traces`;
}
