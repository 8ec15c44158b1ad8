// The one reading of a holder's heartbeat that continue, list-runs --check-liveness and show --follow share.
import { describe, expect, it } from "vitest";
import { heartbeatBetween } from "../../src/store/lease/judge.js";
import { ownRecord, paddedRecord, type OwnerRecord } from "../../src/store/lease/owner-record.js";
import type { RecordReading } from "../../src/store/lease/owner-record.js";

function reading(record: OwnerRecord): RecordReading {
  return { record, text: paddedRecord(record) };
}

describe("heartbeatBetween", () => {
  const first = ownRecord(4, null);

  it("calls the same text twice silent, a bumped counter beating", () => {
    expect(heartbeatBetween(reading(first), reading(first))).toBe("silent");
    expect(heartbeatBetween(reading(first), reading({ ...first, heartbeat: (first.heartbeat ?? 0) + 1 }))).toBe("beating");
  });

  it("calls a released record, or a record gone, released", () => {
    expect(heartbeatBetween(reading(first), reading({ ...first, released_at_unix: Date.now() }))).toBe("released");
    expect(heartbeatBetween(reading(first), null)).toBe("released");
  });

  it("calls another generation taken, and an unreadable second reading that changed beating, never dead", () => {
    expect(heartbeatBetween(reading(first), reading({ ...ownRecord(5, "judged"), heartbeat: 0 }))).toBe("taken");
    expect(heartbeatBetween(reading(first), { record: null, text: "{torn", problem: "not valid JSON" })).toBe("beating");
  });

  it("compares text, not times: an unreadable record that stays the same is silent", () => {
    const torn: RecordReading = { record: null, text: "{torn", problem: "not valid JSON" };
    expect(heartbeatBetween(torn, { ...torn })).toBe("silent");
  });
});
