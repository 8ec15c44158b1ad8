// Hostile inputs for property tests: fast-check arbitraries for agent packages, tool arguments, run ids, .env files and journal lines.

/** Nine aliases per level: 9^levels strings once expanded ("billion laughs"). */
export function aliasBomb(levels = 9): string {
  const lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let level = 1; level < levels; level += 1) {
    const previous = `*l${level - 1}`;
    lines.push(`l${level}: &l${level} [${Array(9).fill(previous).join(",")}]`);
  }
  return `${lines.join("\n")}\n`;
}
