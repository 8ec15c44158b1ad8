// Notices a Streamable HTTP client that went away without ending its session: none of its requests or streams open for the idle bound.
import type { ServerResponse } from "node:http";

/** The default idle bound, in seconds: a client that keeps its GET stream open is never timed out. */
export const DEFAULT_IDLE_SECONDS = 300;

export class SessionLiveness {
  private open = 0;
  private timer: NodeJS.Timeout | undefined;

  /** `gone` is called once the session has had nothing open for `idleMs`. */
  constructor(
    private readonly idleMs: number,
    private readonly gone: () => void,
  ) {}

  /** The client is present while this response (a POST awaiting its answer, or the GET event stream) is open. */
  track(res: ServerResponse): void {
    this.open += 1;
    clearTimeout(this.timer);
    // "close" comes when the response has been sent, or when the connection under it dropped.
    res.once("close", () => {
      this.open -= 1;
      if (this.open === 0) this.arm();
    });
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  private arm(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(this.gone, this.idleMs);
    this.timer.unref();
  }
}
