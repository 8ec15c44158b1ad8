// Types of seccomp-filter.mjs, so TypeScript tests can check the programs the build writes.
export const SECCOMP_ARCHES: Record<string, { audit: number; socket: number; socketpair: number; ioUring: number[]; x32: boolean }>;
export function seccompFileName(arch: string): string;
export function seccompProgram(arch: string): Buffer;
export function writeSeccompPrograms(root?: string): string[];
