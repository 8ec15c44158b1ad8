// The message of the error a synchronous call throws, checked to be of the expected class.
import { expect } from "vitest";

export function thrownMessage(run: () => unknown, type: abstract new (...args: never[]) => Error): string {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(type);
    return (err as Error).message;
  }
  throw new Error(`expected a ${type.name}`);
}
