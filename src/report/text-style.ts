// ANSI colour for the text account, or none: the command line decides (a terminal, and NO_COLOR unset).
export interface TextStyle {
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
}

const paint = (open: number, close: number) => (text: string): string => `\u001b[${open}m${text}\u001b[${close}m`;
const plain = (text: string): string => text;

export function textStyle(color: boolean): TextStyle {
  if (!color) return { bold: plain, dim: plain, red: plain, green: plain, yellow: plain, cyan: plain };
  return { bold: paint(1, 22), dim: paint(2, 22), red: paint(31, 39), green: paint(32, 39), yellow: paint(33, 39), cyan: paint(36, 39) };
}
