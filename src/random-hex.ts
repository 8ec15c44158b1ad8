// Random hex for names that only have to be distinct (run ids, temporary and staging names), without loading node:crypto.
//
// node:crypto costs a few milliseconds to load, and nothing else on a run's way to its first
// model call needs it. Math.random is seeded per process from the operating system's CSPRNG
// (Node hands V8 its entropy source), which is ample for names that are also claimed with an
// exclusive create; nothing secret is ever derived from these.

/** `bytes` random bytes as 2×bytes lowercase hex digits. */
export function randomHex(bytes: number): string {
  let text = "";
  for (let i = 0; i < bytes; i += 1) text += Math.floor(Math.random() * 256).toString(16).padStart(2, "0");
  return text;
}
