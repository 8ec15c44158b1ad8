// The live stream on stderr: every call the model asked for shows as an ACT line and its OBSERVE line, a call refused before it ran included.
import { expect, it } from "vitest";
import { calls, scriptedRun, text } from "./scripted-loop.js";

it("shows ACT then OBSERVE for a call that ran, an unknown tool, arguments that are not JSON, a missing parameter, an option-like value and a call a hook blocked", async () => {
  const run = scriptedRun({
    turns: [calls(["echo", '{"text":"hi"}'], ["nosuch", '{"x":1}'], ["echo", "{not json"], ["echo", "{}"], ["echo", '{"text":"-n"}'], ["echo", '{"text":"blocked"}']), text("done")],
    hooks: { pre_tool_execution: (payload) => (JSON.stringify(payload).includes("blocked") ? { kind: "block", reason: "not this one" } : { kind: "none" }) },
  });
  const lines: string[] = [];
  run.ports.log.progress = (line) => lines.push(line);
  await run.run();
  const stream = lines.filter((line) => /^\[1\] (ACT|OBSERVE)/.test(line));
  expect(stream).toEqual([
    '[1] ACT: echo {"text":"hi"}',
    "[1] OBSERVE: SUCCESS hi",
    '[1] ACT: nosuch {"x":1}',
    expect.stringMatching(/^\[1\] OBSERVE: ERROR Unknown tool 'nosuch'/),
    "[1] ACT: echo {not json",
    expect.stringMatching(/^\[1\] OBSERVE: ERROR The arguments for 'echo' are not valid JSON/),
    "[1] ACT: echo {}",
    expect.stringMatching(/^\[1\] OBSERVE: ERROR .*text/),
    '[1] ACT: echo {"text":"-n"}',
    expect.stringMatching(/^\[1\] OBSERVE: ERROR .*"-n"/),
    '[1] ACT: echo {"text":"blocked"}',
    "[1] OBSERVE: ERROR Blocked by pre_tool_execution hook: not this one",
  ]);
  expect(run.ran).toEqual([["echo", "hi"]]);
});
