/**
 * Request id, access log and request metric for every response. The log line carries method,
 * route template, status and duration: never bodies, query strings, headers or keys.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "@3ngram/runtime";
import type { RequestHandler } from "express";
import { routeOf } from "./locals.js";
import type { GatewayMetrics } from "./metrics.js";

/** An incoming id is reused only when it is short and plain, so it cannot inject into logs or headers. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && SAFE_REQUEST_ID.test(value) ? value : randomUUID();
}

export function observeRequests(log: Logger, metrics: GatewayMetrics): RequestHandler {
  return (req, res, next) => {
    const requestId = requestIdFrom(req.headers["x-request-id"]);
    res.locals.requestId = requestId;
    res.setHeader("x-request-id", requestId);
    const started = performance.now();
    res.on("finish", () => {
      const route = routeOf(res);
      const status = res.statusCode;
      metrics.httpRequests.inc({ route, status: String(status) });
      const fields = { request_id: requestId, method: req.method, route, status, ms: Math.round(performance.now() - started) };
      // The failure itself is logged where it is mapped, at its own level; the access line only flags it.
      if (status >= 500) log.warn(fields, "request");
      else log.info(fields, "request");
    });
    next();
  };
}
