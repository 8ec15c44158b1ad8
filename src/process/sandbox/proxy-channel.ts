// The engine's end of a proxied box's channel: each connection the box's forwarder asks for is opened to the engine's proxy here and handed into the box as a descriptor.
import type { ChildProcess } from "node:child_process";
import { connect } from "node:net";

/** What the forwarder sends for each connection a program in the box opened to it: `{open: id}`. */
export interface OpenRequest {
  open: number;
}

/** What the engine answers, with the connected socket as the message's handle (or `failed` and none). */
export interface OpenAnswer {
  id: number;
  failed?: string;
}

/**
 * Serves `child`'s IPC channel (bwrap's, which the forwarder inherits): a box whose network is a host list
 * needs no Unix socket of its own (its seccomp program refuses them), so the engine connects to the proxy
 * at `socketPath` and sends the connection over the channel, SCM_RIGHTS, which makes no socket in the box.
 * Anything on the channel that is not an open request is ignored.
 */
export function carryProxyConnections(child: ChildProcess, socketPath: string): void {
  child.on("message", (message: unknown) => {
    const id = (message as Partial<OpenRequest> | null)?.open;
    if (typeof id !== "number" || !Number.isSafeInteger(id)) return;
    const upstream = connect(socketPath);
    const answer = (reply: OpenAnswer, handle?: typeof upstream): void => {
      if (!child.connected) {
        upstream.destroy();
        return;
      }
      // The handle is closed here once sent; a channel that closed meanwhile is the box ending.
      child.send(reply, handle, {}, () => upstream.destroy());
    };
    upstream.once("connect", () => answer({ id }, upstream));
    upstream.once("error", (error) => answer({ id, failed: error.message }));
  });
}
