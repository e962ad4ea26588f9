/**
 * /api/v1/import and /api/v1/export: the tenant archive over REST only (no MCP tool).
 *
 *   POST /api/v1/import?format=3ngram|mcp-memory|mem0|basic-memory
 *                                 NDJSON body (application/x-ndjson or text/plain, up to
 *                                 MAX_IMPORT_BODY_BYTES) → per-line results
 *   GET  /api/v1/export           the whole archive, streamed as NDJSON
 *
 * Both stream (docs/adr/0035): the import body goes to the memory service piece by piece as it
 * arrives, never held whole here, and the export's records are written to the response as they
 * come. The import body has its own reader and limit; no JSON parser ever sees it.
 */
import { once } from "node:events";
import { StringDecoder } from "node:string_decoder";
import { SCOPES } from "@3ngram/rpc";
import { errorSummary } from "@3ngram/runtime";
import { MAX_IMPORT_BODY_BYTES, importOutputSchema, importQuerySchema, parseInput } from "@3ngram/schema";
import type { Request, Response } from "express";
import { exportLines, importArchive } from "../clients/archive.js";
import { decodedBody, isDecodableEncoding } from "../http/decoded-body.js";
import { requestFault } from "../http/request-faults.js";
import { requestIdOf } from "../http/locals.js";
import { queryOf } from "./openapi.js";
import type { RestRoute } from "./route.js";

const NDJSON_TYPES = ["application/x-ndjson", "application/ndjson", "application/jsonl", "text/plain"];

export const ARCHIVE_ROUTES: readonly RestRoute[] = [
  {
    method: "post",
    path: "/api/v1/import",
    summary: "import NDJSON (our export, the MCP memory server's JSONL, mem0's memories or basic-memory notes), one transaction per record",
    tag: "archive",
    scope: SCOPES.write,
    query: queryOf(importQuerySchema),
    ndjsonBody: true,
    answers: { 200: { description: "per-line results", json: importOutputSchema } },
    handle: async ({ req, res, memory, log, identity }) => {
      // Scope, query and headers are checked before any of up to 32 MB of body is read.
      const { format } = parseInput(importQuerySchema, { ...req.query });
      const refusal = refuseBody(req);
      if (refusal !== undefined) {
        res.status(refusal.status).json({ error: "invalid_input", detail: refusal.detail, request_id: requestIdOf(res) });
        return;
      }
      // A client that hangs up stops the import: nobody is left to read the per-line results.
      const gone = new AbortController();
      res.on("close", () => {
        if (!res.writableEnded) gone.abort();
      });
      try {
        res.json(await importArchive(memory, format, bodyPieces(req), identity, gone.signal));
      } catch (err) {
        const fault = requestFault(err, { maxBodyBytes: MAX_IMPORT_BODY_BYTES });
        if (fault?.status === 413) {
          // The import was cancelled before its last piece, so nothing was stored. The rest of the
          // body is left unread, so the connection closes with the answer instead of carrying it.
          res
            .set("Connection", "close")
            .status(413)
            .json({ error: fault.reason, detail: fault.detail, request_id: requestIdOf(res) });
          return;
        }
        if (!gone.signal.aborted) throw err;
        log.info({ request_id: requestIdOf(res) }, "import stopped: the client disconnected");
      }
    },
  },
  {
    method: "get",
    path: "/api/v1/export",
    summary: "the whole tenant as NDJSON",
    tag: "archive",
    scope: SCOPES.read,
    answers: { 200: { description: "the archive", media: { type: "application/x-ndjson", schema: { type: "string" } } } },
    handle: async ({ res, memory, log, identity }) => {
      const lines = exportLines(memory, identity)[Symbol.asyncIterator]();
      // The first record is awaited before anything is sent, so a refusal is still a normal error answer.
      let next = await lines.next();
      res.status(200);
      res.set({
        "Content-Type": "application/x-ndjson; charset=utf-8",
        "Content-Disposition": `attachment; filename="3ngram-export-${new Date().toISOString().slice(0, 10)}.ndjson"`,
        "Cache-Control": "no-store",
      });
      let count = 0;
      try {
        for (; !next.done; next = await lines.next()) {
          count += 1;
          if (!(await write(res, `${next.value}\n`))) {
            // The client went away: leaving the stream cancels the export in the memory service.
            await lines.return?.(undefined);
            return;
          }
        }
        res.end();
        log.info({ request_id: requestIdOf(res), lines: count }, "export streamed");
      } catch (err) {
        // Headers are gone: ending normally would hand out a silently truncated archive, so the
        // connection is cut instead and the client sees an incomplete transfer.
        log.error({ request_id: requestIdOf(res), lines: count, error: errorSummary(err) }, "export failed mid-stream");
        res.destroy();
      }
    },
  },
];

/** What body-parser would have refused before reading: the media type, charset, encoding, or a declared length over the limit. */
function refuseBody(req: Request): { status: number; detail: string } | undefined {
  if (!req.is(NDJSON_TYPES)) return { status: 415, detail: "Content-Type must be application/x-ndjson or text/plain" };
  const charset = /;\s*charset="?([^";\s]+)/i.exec(req.headers["content-type"] ?? "")?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") return { status: 415, detail: "unsupported charset" };
  if (!isDecodableEncoding(req)) return { status: 415, detail: "unsupported Content-Encoding" };
  // A declared length counts the encoded bytes, which bound the decoded ones only without an encoding.
  const declared = Number(req.headers["content-length"]);
  if (req.headers["content-encoding"] === undefined && declared > MAX_IMPORT_BODY_BYTES)
    return { status: 413, detail: `request body exceeds ${MAX_IMPORT_BODY_BYTES} bytes` };
  return undefined;
}

/**
 * The body, decompressed and decoded as UTF-8, in the pieces it arrives in (a character split
 * between two chunks is held back for the next). http/decoded-body.ts bounds it by its decoded
 * size while decoding (413 past MAX_IMPORT_BODY_BYTES, before the memory service sees a compressed
 * bomb); a body that does not decode is a 400, as body-parser answers (see http/request-faults.ts).
 * A body cut short by a client that hung up fails the loop, so the import's end message is never
 * sent for it.
 */
async function* bodyPieces(req: Request): AsyncGenerator<string> {
  const text = new StringDecoder("utf8");
  for await (const chunk of decodedBody(req, MAX_IMPORT_BODY_BYTES)) yield text.write(chunk);
  yield text.end();
}

/** Writes a chunk, waiting out backpressure; false when the client has gone. */
async function write(res: Response, chunk: string): Promise<boolean> {
  if (res.destroyed) return false;
  // Lines that arrive together leave in one write to the socket.
  if (!res.writableCorked) {
    res.cork();
    process.nextTick(() => res.uncork());
  }
  if (res.write(chunk)) return true;
  const closed = once(res, "close").then(() => false);
  return Promise.race([once(res, "drain").then(() => !res.destroyed), closed]);
}
