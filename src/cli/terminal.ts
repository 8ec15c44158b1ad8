// Questions to a person at the terminal: prompt on stderr, answer from stdin, passwords not echoed.
import { terminalSafe } from "../terminal-text.js";
import type { Interface } from "node:readline";
import { UsageError } from "../errors.js";
import type { HumanQuestion } from "../loop/ports.js";

let lines: AsyncIterator<string> | null = null;
let reader: Interface | null = null;

/** One line of stdin; `closed` says what to do instead when stdin ends (Ctrl-D) first. */
async function readLine(closed: string): Promise<string> {
  if (!lines) {
    // Loaded on the first question only: most runs never ask one.
    const { createInterface } = await import("node:readline");
    reader = createInterface({ input: process.stdin, terminal: false });
    lines = reader[Symbol.asyncIterator]();
  }
  const next = await lines.next();
  if (next.done) throw new UsageError(`stdin was closed (Ctrl-D) before an answer was given; ${closed}`);
  return next.value;
}

/** Reads one line with echo off, when stdin is a terminal. */
function readHidden(): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    let answer = "";
    const onData = (chunk: Buffer): void => {
      for (const char of chunk.toString("utf8")) {
        if (char === "\r" || char === "\n" || char === "\u0004") {
          done();
          process.stderr.write("\n");
          resolve(answer);
          return;
        }
        if (char === "\u0003") {
          done();
          reject(new Error("input cancelled"));
          return;
        }
        answer = char === "\u007f" ? answer.slice(0, -1) : answer + char;
      }
    };
    const done = (): void => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
    };
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on("data", onData);
  });
}

export async function askOnTerminal(question: HumanQuestion): Promise<string> {
  const hint = question.input_type === "confirmation" ? " [yes/no]" : "";
  process.stderr.write(`\n[ask_human] ${terminalSafe(question.prompt)}${hint}\n> `);
  const hidden = (question.sensitive || question.input_type === "password") && process.stdin.isTTY;
  return hidden ? readHidden() : readLine("answer with `delta continue -m <answer>` instead");
}

export async function promptLine(question: string): Promise<string> {
  process.stderr.write(question);
  return readLine("no workspace chosen. Pass -y for a new workspace, or -w <dir>");
}

export function closeTerminal(): void {
  reader?.close();
}
