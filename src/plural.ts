// A count and its noun, singular for one: "1 iteration", "3 iterations".

export function counted(count: number, singular: string, plural = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : plural}`;
}
