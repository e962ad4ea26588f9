import type { RequestHandler } from "express";
import { readJsonBody } from "../http/json-body.js";
import { requestIdOf } from "../http/locals.js";

/**
 * A JSON body of at most MAX_REQUEST_BODY_BYTES decoded. Other media types get 415; malformed,
 * oversized and unknown-encoding bodies are answered by restErrorHandler (400, 413 and 415).
 */
export function jsonBody(): RequestHandler[] {
  return [
    (req, res, next) => {
      if (req.is("application/json")) {
        next();
        return;
      }
      res.status(415).json({ error: "invalid_input", detail: "Content-Type must be application/json", request_id: requestIdOf(res) });
    },
    readJsonBody({ strict: true }),
  ];
}
