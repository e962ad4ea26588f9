import { MAX_REQUEST_BODY_BYTES } from "@3ngram/schema";
import express, { type RequestHandler } from "express";
import { requestIdOf } from "../http/locals.js";

/**
 * A JSON body of at most MAX_REQUEST_BODY_BYTES. Other media types get 415; malformed and
 * oversized bodies are answered by restErrorHandler (400 and 413).
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
    express.json({ limit: MAX_REQUEST_BODY_BYTES }),
  ];
}
