/**
 * REST edge of the error model: an AppError becomes `{ error, detail?, field?, ids?, request_id }`
 * with the HTTP status from the one reason table. Unknown errors are never described to the caller.
 */
import { AppError, REASONS, toAppError } from "@3ngram/errors";
import { MAX_REQUEST_BODY_BYTES, type RestErrorBody } from "@3ngram/schema";
import { errorSummary, type Logger } from "@3ngram/runtime";
import type { ErrorRequestHandler, Response } from "express";
import { requestIdOf } from "../http/locals.js";
import { requestFault } from "../http/request-faults.js";

export const WWW_AUTHENTICATE = 'Bearer realm="3ngram"';

export interface RestError {
  status: number;
  headers: Record<string, string>;
  body: RestErrorBody;
}

/** Pure mapping, so every reason can be checked without a server. */
export function restError(err: AppError, requestId: string): RestError {
  const status = REASONS[err.reason].http;
  const headers: Record<string, string> = {};
  if (err.reason === "unauthenticated") headers["WWW-Authenticate"] = WWW_AUTHENTICATE;
  if (err.reason === "unavailable" || err.reason === "rate_limited") headers["Retry-After"] = "1";
  const body: RestErrorBody = { error: err.reason, request_id: requestId };
  // Our own failures are described only in the logs.
  if (err.reason === "internal_error") return { status, headers, body };
  if (err.message) body.detail = err.message;
  if (err.details.field) body.field = err.details.field;
  if (err.details.ids && Object.keys(err.details.ids).length > 0) body.ids = err.details.ids;
  return { status, headers, body };
}

export function sendError(res: Response, err: unknown, log: Logger): void {
  const requestId = requestIdOf(res);
  const appError = toAppError(err);
  logError(log, err, appError, requestId);
  const { status, headers, body } = restError(appError, requestId);
  for (const [name, value] of Object.entries(headers)) if (!res.get(name)) res.set(name, value);
  res.status(status).json(body);
}

/** Caller faults at warn, our own at error; never payloads. */
export function logError(log: Logger, original: unknown, appError: AppError, requestId: string): void {
  const fields = { request_id: requestId, reason: appError.reason, ...(appError.details.field ? { field: appError.details.field } : {}) };
  if (REASONS[appError.reason].callerFault) log.warn(fields, "request refused");
  else log.error({ ...fields, error: errorSummary(original) }, "request failed");
}

/** Last middleware: a request that could not be read (bad path escapes, bodies), then everything a route let escape. */
export function restErrorHandler(log: Logger): ErrorRequestHandler {
  return (err, _req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const fault = requestFault(err, { maxBodyBytes: MAX_REQUEST_BODY_BYTES });
    if (fault !== undefined) {
      const requestId = requestIdOf(res);
      log.warn({ request_id: requestId, reason: fault.reason, status: fault.status }, "unreadable request refused");
      res.status(fault.status).json({ error: fault.reason, detail: fault.detail, request_id: requestId });
      return;
    }
    sendError(res, err, log);
  };
}
