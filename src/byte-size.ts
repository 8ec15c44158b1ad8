// A byte count for people to read: "512 B", "2.9 KiB", "1.5 MiB" (powers of 1024, one decimal).
const UNITS = ["KiB", "MiB", "GiB", "TiB"] as const;

export function humanBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${UNITS[unit]}`;
}
