/**
 * One SERVER span per HTTP request, continuing the caller's W3C trace context when it sends one
 * (`traceparent`), so an agent's own trace runs on through the gateway into memory and search.
 * The request and response emitters are bound to the span's context, so work that resumes from a
 * body stream (JSON parsing, the MCP handler reading its body) still runs inside it. Named by
 * route template and method, never by the raw URL, which may hold ids or query text.
 */
import { SpanKind, SpanStatusCode, ROOT_CONTEXT, context, propagation, trace } from "@opentelemetry/api";
import type { RequestHandler } from "express";
import { routeOf } from "./locals.js";

// Looked up at each use, never kept from module load: see startTracing (@3ngram/runtime).
const tracer = () => trace.getTracer("@3ngram/gateway");

export function traceRequests(): RequestHandler {
  return (req, res, next) => {
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const span = tracer().startSpan(req.method, { kind: SpanKind.SERVER, attributes: { "http.request.method": req.method } }, parent);
    const active = trace.setSpan(parent, span);
    res.on("finish", () => {
      const route = routeOf(res);
      span.updateName(`${req.method} ${route}`);
      span.setAttributes({ "http.route": route, "http.response.status_code": res.statusCode });
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    context.bind(active, req);
    context.bind(active, res);
    context.with(active, next);
  };
}
