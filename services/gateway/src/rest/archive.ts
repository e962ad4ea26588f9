/**
 * /api/v1/import and /api/v1/export: the tenant archive over REST only (no MCP tool).
 *
 *   POST /api/v1/import?format=3ngram|mcp-memory   NDJSON body (application/x-ndjson or text/plain,
 *                                                  up to MAX_IMPORT_BODY_BYTES) → per-line results
 *   GET  /api/v1/export                            the whole archive, streamed as NDJSON
 *
 * The import body has its own parser and limit; no JSON parser ever sees it.
 */
import { once } from "node:events";
import { SCOPES } from "@3ngram/rpc";
import { errorSummary, type Logger } from "@3ngram/runtime";
import { MAX_IMPORT_BODY_BYTES, importQuerySchema, parseInput } from "@3ngram/schema";
import express, { Router, type RequestHandler, type Response } from "express";
import { exportPage, importArchive } from "../clients/archive.js";
import type { MemoryClient } from "../clients/memory.js";
import { requestIdOf, routeLabel } from "../http/locals.js";
import { identityFor } from "../http/identity.js";

const NDJSON_TYPES = ["application/x-ndjson", "application/ndjson", "application/jsonl", "text/plain"];

/** Mounted at /api/v1; `auth` runs before any body is read. */
export function archiveRouter(memory: MemoryClient, auth: RequestHandler, log: Logger): Router {
  const router = Router();

  router.post(
    "/import",
    routeLabel("POST /api/v1/import"),
    auth,
    // Scope and query are checked before up to 32 MB of body is read.
    (req, res, next) => {
      identityFor(res, SCOPES.write);
      parseInput(importQuerySchema, { ...req.query });
      next();
    },
    ndjsonBody(),
    async (req, res) => {
      const identity = identityFor(res, SCOPES.write);
      const { format } = parseInput(importQuerySchema, { ...req.query });
      const ndjson = typeof req.body === "string" ? req.body : "";
      // A client that hangs up stops the import: nobody is left to read the per-line results.
      const gone = new AbortController();
      res.on("close", () => {
        if (!res.writableEnded) gone.abort();
      });
      try {
        res.json(await importArchive(memory, { format, ndjson }, identity, gone.signal));
      } catch (err) {
        if (!gone.signal.aborted) throw err;
        log.info({ request_id: requestIdOf(res) }, "import stopped: the client disconnected");
      }
    },
  );

  router.get("/export", routeLabel("GET /api/v1/export"), auth, async (_req, res) => {
    const identity = identityFor(res, SCOPES.read);
    // The first page is fetched before anything is sent, so a refusal is still a normal error answer.
    let page = await exportPage(memory, null, identity);
    res.status(200);
    res.set({
      "Content-Type": "application/x-ndjson; charset=utf-8",
      "Content-Disposition": `attachment; filename="3ngram-export-${new Date().toISOString().slice(0, 10)}.ndjson"`,
      "Cache-Control": "no-store",
    });
    let pages = 0;
    let lines = 0;
    try {
      for (;;) {
        pages += 1;
        lines += page.lines.length;
        if (page.lines.length > 0 && !(await write(res, page.lines.join("\n") + "\n"))) return; // client went away
        if (page.next === null) break;
        page = await exportPage(memory, page.next, identity);
      }
      res.end();
      log.info({ request_id: requestIdOf(res), pages, lines }, "export streamed");
    } catch (err) {
      // Headers are gone: ending normally would hand out a silently truncated archive, so the
      // connection is cut instead and the client sees an incomplete transfer.
      log.error({ request_id: requestIdOf(res), pages, lines, error: errorSummary(err) }, "export failed mid-stream");
      res.destroy();
    }
  });

  return router;
}

/**
 * The NDJSON body as text, up to MAX_IMPORT_BODY_BYTES. Other media types get 415, a larger body
 * 413 (naming this route's limit, not the JSON one); other parse failures go to restErrorHandler.
 */
function ndjsonBody(): RequestHandler {
  const parse = express.text({ type: NDJSON_TYPES, limit: MAX_IMPORT_BODY_BYTES });
  return (req, res, next) => {
    if (!req.is(NDJSON_TYPES)) {
      res.status(415).json({ error: "invalid_input", detail: "Content-Type must be application/x-ndjson or text/plain", request_id: requestIdOf(res) });
      return;
    }
    parse(req, res, (err?: unknown) => {
      if ((err as { type?: unknown } | undefined)?.type === "entity.too.large") {
        res.status(413).json({ error: "invalid_input", detail: `request body exceeds ${MAX_IMPORT_BODY_BYTES} bytes`, request_id: requestIdOf(res) });
        return;
      }
      next(err);
    });
  };
}

/** Writes a chunk, waiting out backpressure; false when the client has gone. */
async function write(res: Response, chunk: string): Promise<boolean> {
  if (res.destroyed) return false;
  if (res.write(chunk)) return true;
  const closed = once(res, "close").then(() => false);
  return Promise.race([once(res, "drain").then(() => !res.destroyed), closed]);
}
