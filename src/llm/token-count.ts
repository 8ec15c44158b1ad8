// A token count as servers send it: a whole number ≥ 0, or nothing (a float a server rounds oddly is rounded).
export function tokenCount(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
}
