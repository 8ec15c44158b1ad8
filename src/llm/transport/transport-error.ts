// The one error the transport throws for a failed exchange (refused, reset, cut short, undecodable): always worth a retry.
export class TransportError extends Error {
  override readonly name = "TransportError";
}
