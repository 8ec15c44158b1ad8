// Turns an example's recording.jsonl into steps for the scripted model server, so a test can send the same conversation over the wire.
import { readFileSync } from "node:fs";
import { reply, type Step } from "../support/mock-llm.js";

interface RecordedReply {
  content: string | null;
  tool_calls: { id: string; name: string; arguments: string }[];
}

export function recordingAsScript(file: string): Step[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as RecordedReply)
    .map((recorded) =>
      recorded.tool_calls.length === 0
        ? reply.text(recorded.content ?? "")
        : reply.toolCalls(
            recorded.tool_calls.map((call) => ({ id: call.id, name: call.name, arguments: JSON.parse(call.arguments) as Record<string, unknown> })),
            recorded.content,
          ),
    );
}
