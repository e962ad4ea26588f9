/**
 * The one reader for JSON request bodies, REST's and /mcp's: body-parser's, at most
 * MAX_REQUEST_BODY_BYTES. It decodes gzip, deflate and br and counts the decoded bytes as they come
 * out of the decoder (raw-body over the decompression stream), destroying the decoder at the
 * limit, so a compressed bomb costs a limit's worth of decoding and is answered 413 at once. Any
 * other Content-Encoding is 415 (encoding.unsupported) and is never read as plain: refused here
 * before body-parser, which would decode whatever node:zlib can (zstd too from Node.js 23.8), so
 * the gateway decodes the same encodings on every Node.js, for JSON and the import alike
 * (http/decoded-body.ts). Failures are http-errors, which http/request-faults.ts turns into answers.
 */
import { MAX_REQUEST_BODY_BYTES } from "@3ngram/schema";
import type { IncomingMessage } from "node:http";
import express, { type RequestHandler } from "express";
import { isDecodableEncoding, unsupportedEncoding } from "./decoded-body.js";

interface JsonBodyOptions {
  /** Only objects and arrays at the top level (REST); /mcp leaves any other JSON to the SDK to refuse. */
  strict: boolean;
  /** Which requests carry a body to read; the rest pass through unread. */
  accepts?: (req: IncomingMessage) => boolean;
}

/** Decoded lengths, for telling an empty body (which body-parser hands on as {}) from a real one. */
const decodedLengths = new WeakMap<IncomingMessage, number>();

export function readJsonBody(options: JsonBodyOptions): RequestHandler {
  const parse = express.json({
    limit: MAX_REQUEST_BODY_BYTES,
    strict: options.strict,
    ...(options.accepts === undefined ? {} : { type: options.accepts }),
    verify: (req, _res, buf) => {
      decodedLengths.set(req, buf.length);
    },
  });
  return (req, res, next) => {
    // Only a request this reader is for (req.is answers null for one without a body).
    const accepted = options.accepts ? options.accepts(req) : Boolean(req.is("application/json"));
    if (accepted && !isDecodableEncoding(req)) return next(unsupportedEncoding());
    parse(req, res, next);
  };
}

/** True when the request had a body to read and it decoded to nothing. */
export function bodyWasEmpty(req: IncomingMessage): boolean {
  return decodedLengths.get(req) === 0;
}
