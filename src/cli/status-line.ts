// One line at the bottom of a terminal's stderr saying what the run is doing now, redrawn in place, cleared when done.
import type { Activity } from "../loop/activity.js";
import { terminalSafe } from "../terminal-text.js";

/** How often the elapsed time is redrawn. */
const REDRAW_MS = 250;
/** Text kept of a streamed reply: enough for the widest terminal line. */
const TEXT_TAIL_CHARS = 400;

interface StatusLine {
  /** Shows what the engine does now. */
  show(activity: Activity): void;
  /** Writes a whole line of output above the status line. */
  above(text: string): void;
  /** Removes the status line for good. */
  stop(): void;
}

/** On a terminal (and TERM not `dumb`) a live line; anywhere else nothing but the lines themselves. */
export function createStatusLine(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv = process.env): StatusLine {
  if (!stream.isTTY || env.TERM === "dumb") return { show: () => {}, above: (text) => stream.write(terminalSafe(text)), stop: () => {} };
  let current: { text: string; since: number; streamed: string; chars: number } | null = null;
  let drawn = false;
  let lastModel = "";
  let timer: NodeJS.Timeout | null = null;
  const clear = (): void => {
    if (drawn) stream.write("\r\x1b[2K");
    drawn = false;
  };
  const draw = (): void => {
    if (current === null) return clear();
    const seconds = ((Date.now() - current.since) / 1000).toFixed(1);
    const streamed = current.streamed === "" ? "" : ` · ~${Math.ceil(current.chars / 4)} tokens · ${current.streamed}`;
    const line = `${current.text} · ${seconds}s${streamed}`;
    const width = Math.max(20, (stream.columns || 80) - 1);
    // The end of a streamed reply is what is new: keep it, drop the middle.
    const fitted = line.length <= width ? line : `${line.slice(0, Math.floor(width / 2))}…${line.slice(line.length - (width - Math.floor(width / 2) - 1))}`;
    stream.write(`\r\x1b[2K${fitted}`);
    drawn = true;
  };
  const start = (text: string): void => {
    current = { text, since: Date.now(), streamed: "", chars: 0 };
    timer ??= setInterval(draw, REDRAW_MS);
    // The line must never keep a finished process alive.
    timer.unref();
    draw();
  };
  const idle = (): void => {
    current = null;
    if (timer !== null) clearInterval(timer);
    timer = null;
    clear();
  };
  return {
    show(activity) {
      switch (activity.kind) {
        case "model":
          lastModel = activity.model;
          return start(`[${activity.iteration}] ${terminalSafe(activity.model)} thinking`);
        case "model-text":
          if (current === null) start(`[${activity.iteration}] ${terminalSafe(lastModel)} writing`);
          current!.chars += activity.text.length;
          current!.streamed = terminalSafe(`${current!.streamed}${activity.text}`.replace(/\s+/g, " ")).slice(-TEXT_TAIL_CHARS);
          return draw();
        case "tool":
          return start(`[${activity.iteration}] running ${terminalSafe(activity.tool)}`);
        case "mcp-start":
          return start(`starting MCP server${activity.servers.length === 1 ? "" : "s"} ${terminalSafe(activity.servers.join(", "))}`);
        case "idle":
          return idle();
        default: {
          const unknown: never = activity;
          throw new Error(`unknown activity ${JSON.stringify(unknown)}`);
        }
      }
    },
    above(text) {
      const wasDrawn = drawn;
      clear();
      // The run's own lines quote the model and its tools: the one stripper, as every stderr line.
      stream.write(terminalSafe(text));
      if (wasDrawn || current !== null) draw();
    },
    stop: idle,
  };
}
