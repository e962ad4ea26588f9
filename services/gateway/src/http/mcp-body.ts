/**
 * /mcp's body, read by the same reader as REST's (http/json-body.ts) so Content-Encoding means the
 * same on both: gzip, deflate and br are decoded within the same bound, any other encoding is 415,
 * and an encoded body is never parsed as plain. The SDK then gets the parsed body and reads
 * nothing itself. Refusals are JSON-RPC error bodies, in the SDK's own words where it has them.
 * A POST whose media type is not JSON is left unread for the SDK to refuse (415).
 */
import { MAX_REQUEST_BODY_BYTES } from "@3ngram/schema";
import type { Logger } from "@3ngram/runtime";
import { isJsonContentType } from "@modelcontextprotocol/server";
import type { IncomingMessage } from "node:http";
import { Router, type ErrorRequestHandler, type RequestHandler, type Response } from "express";
import { bodyWasEmpty, readJsonBody } from "./json-body.js";
import { requestIdOf } from "./locals.js";
import { requestFault } from "./request-faults.js";

const carriesJson = (req: IncomingMessage) => req.method === "POST" && isJsonContentType(req.headers["content-type"] ?? null);

export function readMcpBody(log: Logger): RequestHandler {
  const refuse = (res: Response, status: number, code: number, message: string) => {
    log.warn({ request_id: requestIdOf(res), reason: "unreadable_body", status }, "request refused");
    res.status(status).json({ jsonrpc: "2.0", id: null, error: { code, message } });
  };
  const refuseEmpty: RequestHandler = (req, res, next) => {
    // body-parser makes {} of an empty body; the SDK answers an empty body as unparseable JSON.
    if (carriesJson(req) && bodyWasEmpty(req)) refuse(res, 400, -32700, "Parse error: Invalid JSON");
    else next();
  };
  const answerFault: ErrorRequestHandler = (err: unknown, _req, res, next) => {
    const fault = requestFault(err, { maxBodyBytes: MAX_REQUEST_BODY_BYTES });
    if (fault === undefined) {
      next(err);
      return;
    }
    if (fault.status === 413) refuse(res, 413, -32000, `Payload Too Large: Request body must not exceed ${MAX_REQUEST_BODY_BYTES} bytes`);
    else if (fault.status === 415) refuse(res, 415, -32000, `Unsupported Media Type: ${fault.detail}`);
    else if (fault.detail === "malformed JSON body") refuse(res, 400, -32700, "Parse error: Invalid JSON");
    else refuse(res, 400, -32700, `Parse error: ${fault.detail}`);
  };
  return Router().use(readJsonBody({ strict: false, accepts: carriesJson }), refuseEmpty, answerFault);
}
