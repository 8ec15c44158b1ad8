// Undoes a reply's Content-Encoding (gzip, deflate, br, or several in a row), chunk by chunk, so a compressed stream is read as it comes.
import { Readable, type Transform } from "node:stream";
import { TransportError } from "./transport-error.js";

/** What the engine asks servers for: every coding it can decode. */
export const ACCEPT_ENCODING = "gzip, deflate, br";

/** The body's chunks with every coding in the header undone, last applied first; zlib loads only for a coded body. */
export async function* decodeChunks(chunks: AsyncIterable<Buffer>, contentEncoding: string | undefined): AsyncIterable<Buffer> {
  const codings = (contentEncoding ?? "")
    .split(",")
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== "" && coding !== "identity");
  let decoded: AsyncIterable<Buffer> = chunks;
  for (const coding of codings.reverse()) decoded = decodeOne(decoded, coding);
  yield* decoded;
}

async function* decodeOne(chunks: AsyncIterable<Buffer>, coding: string): AsyncIterable<Buffer> {
  const iterator = chunks[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done) return;
  const decoder = await decoderFor(coding, first.value);
  const source = Readable.from(
    (async function* () {
      yield first.value;
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
    })(),
  );
  source.on("error", (err) => decoder.destroy(err));
  source.pipe(decoder);
  try {
    for await (const chunk of decoder) yield chunk as Buffer;
  } catch (err) {
    if (err instanceof TransportError) throw err;
    throw new TransportError(`the reply's ${coding} body could not be decoded (${err instanceof Error ? err.message : String(err)})`, { cause: err });
  }
}

// Loaded once: each `import()` of a built-in wraps its exports in a new namespace object.
let zlibModule: Promise<typeof import("node:zlib")> | undefined;

async function decoderFor(coding: string, head: Buffer): Promise<Transform> {
  const zlib = await (zlibModule ??= import("node:zlib"));
  switch (coding) {
    case "gzip":
    case "x-gzip":
      return zlib.createGunzip();
    case "br":
      return zlib.createBrotliDecompress();
    case "deflate":
      // "deflate" should be zlib-wrapped, but some servers send a raw deflate stream: tell them apart by the zlib header.
      return isZlibHeader(head) ? zlib.createInflate() : zlib.createInflateRaw();
    default:
      throw new TransportError(`the reply is encoded as ${JSON.stringify(coding)}, which the engine cannot decode (it accepts ${ACCEPT_ENCODING})`);
  }
}

function isZlibHeader(head: Buffer): boolean {
  if (head.length < 2) return false;
  return (head[0]! & 0x0f) === 8 && ((head[0]! << 8) | head[1]!) % 31 === 0;
}
