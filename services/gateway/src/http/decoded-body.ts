/**
 * A request body decoded from its Content-Encoding and bounded by its decoded size while it is
 * decoded, for a route that streams its body onwards (the import) rather than parsing it whole.
 * JSON bodies (REST and /mcp) go through http/json-body.ts, which bounds decoding the same way.
 *
 * A compressed body can expand a thousand-fold (gzip) or far more (brotli): 67 bytes of brotli
 * become 40 MiB. Counting the output as it is consumed is not enough when the consumer does real
 * work per piece (the import hands each one to the memory service), because the refusal then
 * comes only after a limit's worth of that work. So a compressed body that arrives whole within a
 * small window is first decoded once without keeping anything, just to measure it: a bomb is
 * refused at the limit having cost only the decoding, and nothing reaches the consumer. A body
 * larger than the window is streamed and counted as it goes; its sender has paid for the window
 * in bytes, which bounds how much work each byte it sends can cause.
 *
 * Failures carry http-errors' fields (status, expose, type), as body-parser raises them, so
 * http/request-faults.ts answers them like any other body failure.
 */
import { Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate, type ZlibOptions, type BrotliOptions } from "node:zlib";
import type { IncomingMessage } from "node:http";
import type { Request } from "express";

type Decoder = (options: ZlibOptions & BrotliOptions) => NodeJS.ReadWriteStream;

const DECODERS: Readonly<Record<string, Decoder | null>> = {
  identity: null,
  gzip: createGunzip,
  "x-gzip": createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/** A compressed body at most this long is measured before any of it is handed on. */
const MEASURE_WINDOW_BYTES = 1024 * 1024;
/** Larger output pieces than zlib's 16 KiB default: a quarter of the per-piece work downstream. */
const DECODED_CHUNK_BYTES = 64 * 1024;
/** Measuring keeps nothing, so it decodes into large pieces: each costs a fixed overhead. */
const MEASURE_CHUNK_BYTES = 1024 * 1024;

type BodyFault = Error & { status: number; expose: true; type: string };

function fault(status: number, type: string, message: string, cause?: unknown): BodyFault {
  return Object.assign(new Error(message, cause === undefined ? {} : { cause }), { status, expose: true as const, type });
}

/** The request's Content-Encoding, normalised; absent is identity. */
function contentEncodingOf(req: IncomingMessage): string {
  return (req.headers["content-encoding"] ?? "identity").trim().toLowerCase();
}

/** Whether the body's Content-Encoding is one the gateway decodes (here, and in http/json-body.ts). */
export function isDecodableEncoding(req: IncomingMessage): boolean {
  return Object.hasOwn(DECODERS, contentEncodingOf(req));
}

/** The refusal of a Content-Encoding the gateway does not decode. */
export function unsupportedEncoding(): BodyFault {
  return fault(415, "encoding.unsupported", "unsupported Content-Encoding");
}

/**
 * The body's decoded bytes in pieces, never more than `limit` of them: past it the decoder is
 * destroyed and a 413 fault (type entity.too.large) is thrown. An encoding this reader does not
 * know is a 415 (encoding.unsupported), a body that does not decode a 400. A body cut short by a
 * client that hung up fails the loop (Node rejects an aborted request's iterator).
 */
export async function* decodedBody(req: Request, limit: number): AsyncGenerator<Buffer> {
  const encoding = contentEncodingOf(req);
  if (!Object.hasOwn(DECODERS, encoding)) throw unsupportedEncoding();
  const decoder = DECODERS[encoding];
  // One iterator over the request, never returned early: returning it would destroy the request,
  // and with it the socket the refusal is to be answered on (Node discards what is left unread).
  const reader = req[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  if (decoder === null || decoder === undefined) {
    yield* counted(remaining([], reader), limit);
    return;
  }
  const head = await readUpTo(reader, MEASURE_WINDOW_BYTES);
  if (head.whole) await measure(decoder, head.chunks, limit);
  const raw = Readable.from(head.whole ? head.chunks : remaining(head.chunks, reader));
  const decoding = decoder({ chunkSize: DECODED_CHUNK_BYTES }) as unknown as Readable & NodeJS.WritableStream;
  raw.on("error", (err) => decoding.destroy(err));
  raw.pipe(decoding);
  try {
    yield* counted(decoding, limit);
  } finally {
    // At the limit (or any other exit) the decoder stops here, mid-body, rather than running on.
    raw.unpipe(decoding);
    raw.destroy();
    decoding.destroy();
  }
}

/** Counts `source` out piece by piece; leaving the loop (at the limit or otherwise) ends it. */
async function* counted(source: AsyncIterable<Buffer>, limit: number): AsyncGenerator<Buffer> {
  let bytes = 0;
  try {
    for await (const chunk of source) {
      bytes += chunk.length;
      if (bytes > limit) throw fault(413, "entity.too.large", `request body exceeds ${limit} bytes`);
      yield chunk;
    }
  } catch (err) {
    if ((err as Partial<BodyFault>).expose === true) throw err;
    throw fault(400, "encoding.failed", "unreadable request body", err);
  }
}

/** Decodes `chunks` once, keeping nothing, to learn whether they stay within `limit` decoded. */
async function measure(decoder: Decoder, chunks: readonly Buffer[], limit: number): Promise<void> {
  const decoding = decoder({ chunkSize: MEASURE_CHUNK_BYTES }) as unknown as Readable & NodeJS.WritableStream;
  Readable.from(chunks).pipe(decoding);
  for await (const piece of counted(decoding, limit)) void piece;
}

/** Reads the request until it ends or more than `window` bytes have come, whichever is first. */
async function readUpTo(reader: AsyncIterator<Buffer>, window: number): Promise<{ chunks: Buffer[]; whole: boolean }> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for (;;) {
    const next = await reader.next().catch((err: unknown) => {
      throw fault(400, "request.aborted", "request body cut short", err);
    });
    if (next.done === true) return { chunks, whole: true };
    chunks.push(next.value);
    bytes += next.value.length;
    if (bytes > window) return { chunks, whole: false };
  }
}

/** What was read ahead, then the rest of the request. */
async function* remaining(head: readonly Buffer[], reader: AsyncIterator<Buffer>): AsyncGenerator<Buffer> {
  yield* head;
  for (let next = await reader.next(); next.done !== true; next = await reader.next()) yield next.value;
}
