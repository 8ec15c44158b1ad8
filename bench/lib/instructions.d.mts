// Types of instructions.mjs, for what TypeScript tests import from it.
export function canCountInstructions(): Promise<boolean>;
export function countInstructions(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number>;
export function annotatedInstructions(text: string): number;
