/**
 * W3C trace context across gRPC: the client starts a CLIENT span per call and writes its
 * `traceparent` (and `tracestate`, baggage) into the call's metadata; the server reads it back and
 * runs the handler inside a SERVER span that is its child. Both go through the global OpenTelemetry
 * API, so with tracing off (no provider registered) the spans are no-ops and nothing is written.
 */
import * as grpc from "@grpc/grpc-js";
import { SpanKind, SpanStatusCode, context, propagation, trace, type Span, type TextMapGetter, type TextMapSetter } from "@opentelemetry/api";

// Looked up at each use, never kept from module load: see startTracing (@3ngram/runtime).
const tracer = () => trace.getTracer("@3ngram/rpc");

const metadataSetter: TextMapSetter<grpc.Metadata> = { set: (metadata, key, value) => metadata.set(key, value) };
const metadataGetter: TextMapGetter<grpc.Metadata> = {
  keys: (metadata) => Object.keys(metadata.getMap()),
  get: (metadata, key) => {
    const values = metadata.get(key).filter((v): v is string => typeof v === "string");
    return values.length === 0 ? undefined : values;
  },
};

function attributes(fullName: string): Record<string, string> {
  const [service = fullName, method = ""] = fullName.split("/");
  return { "rpc.system": "grpc", "rpc.service": service, "rpc.method": method };
}

/** Runs one outgoing call inside a CLIENT span whose context travels in `metadata`. */
export function traceClientCall<T>(fullName: string, metadata: grpc.Metadata, call: () => Promise<T>): Promise<T> {
  return tracer().startActiveSpan(fullName, { kind: SpanKind.CLIENT, attributes: attributes(fullName) }, async (span) => {
    propagation.inject(context.active(), metadata, metadataSetter);
    try {
      return await call();
    } catch (err) {
      failed(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/**
 * Starts the CLIENT span of a response stream, whose context travels in `metadata`; the stream's
 * reader ends it (with the failure, if any) when the stream is done.
 */
export function traceClientStream(fullName: string, metadata: grpc.Metadata): { end(failure?: unknown): void } {
  const span = tracer().startSpan(fullName, { kind: SpanKind.CLIENT, attributes: attributes(fullName) });
  propagation.inject(trace.setSpan(context.active(), span), metadata, metadataSetter);
  return {
    end(failure) {
      if (failure !== undefined) failed(span, failure);
      span.end();
    },
  };
}

/** Runs one incoming call inside a SERVER span, the child of whatever the caller's metadata carries. */
export function traceServerCall<T>(fullName: string, metadata: grpc.Metadata, handle: (span: Span) => Promise<T>): Promise<T> {
  const parent = propagation.extract(context.active(), metadata, metadataGetter);
  return tracer().startActiveSpan(fullName, { kind: SpanKind.SERVER, attributes: attributes(fullName) }, parent, async (span) => {
    try {
      return await handle(span);
    } finally {
      span.end();
    }
  });
}

/** Marks a span failed with the error's class and our reason code, never its message (which may quote input). */
export function failed(span: Span, err: unknown, reason?: string): void {
  const type = err instanceof Error ? err.name : "Error";
  span.setStatus({ code: SpanStatusCode.ERROR, message: reason ?? type });
  span.setAttribute("error.type", reason ?? type);
}
