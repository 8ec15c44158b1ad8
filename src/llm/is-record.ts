// The one test every reader of a server's JSON starts with: is this value a plain object.
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
