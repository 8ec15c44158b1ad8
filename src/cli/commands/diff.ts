// `delta diff A B`: the first model call whose requests differ between two runs, part by part, then their tool calls side by side; exit 0 when every request is equal, 1 when one differs.
import { EXIT, UsageError } from "../../errors.js";
import { diffRuns } from "../../report/run-diff.js";
import { runDiffText } from "../../report/run-diff-text.js";
import { textStyle } from "../../report/text-style.js";
import type { CliIo } from "../io.js";
import { parseFormat } from "../options.js";
import { findRunOrFolder } from "../run-query.js";

export async function diffCommand(first: string | undefined, second: string | undefined, flags: Record<string, unknown>, io: CliIo): Promise<number> {
  const format = parseFormat(flags.format, ["text", "json"]);
  if (first === undefined || second === undefined) {
    throw new UsageError("delta diff compares two runs: delta diff <run-a> <run-b> [-w <workspace> | --agent <dir>], each a run id or a run folder's path (<workspace>/.delta/<run-id>).");
  }
  const diff = diffRuns(await findRunOrFolder(first, flags), await findRunOrFolder(second, flags));
  if (format === "json") {
    io.out(`${JSON.stringify(diff, null, 2)}\n`);
  } else {
    io.out(runDiffText(diff, textStyle(Boolean(process.stdout.isTTY) && !process.env.NO_COLOR)).map((line) => `${line}\n`).join(""));
  }
  return diff.equal ? EXIT.COMPLETED : EXIT.FAILED;
}
