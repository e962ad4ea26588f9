/**
 * W3C trace context into queued jobs: the producer's context is written into a small carrier that
 * travels with the job (beside the payload, never inside it, so payload schemas stay as they are),
 * and the worker runs the handler in a CONSUMER span that continues the producer's trace. With
 * tracing off the carrier stays empty and nothing is stored.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, propagation, trace } from "@opentelemetry/api";
import type { JobHandler } from "./queue.js";

/** traceparent, tracestate, baggage: as the propagators wrote them. */
export type TraceCarrier = Record<string, string>;

// Looked up at each use, never kept from module load: see startTracing (@3ngram/runtime).
const tracer = () => trace.getTracer("@3ngram/queue");

/** The current trace context as a carrier, or undefined when there is none to carry. */
export function currentTraceCarrier(): TraceCarrier | undefined {
  const carrier: TraceCarrier = {};
  propagation.inject(context.active(), carrier);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

/**
 * Runs fn in the trace context a carrier describes (one recorded earlier, e.g. by a write whose
 * job is queued later), so spans fn starts continue that trace; without a carrier, as it is.
 */
export function withTraceCarrier<T>(carrier: TraceCarrier | undefined, fn: () => T): T {
  if (carrier === undefined) return fn();
  return context.with(propagation.extract(ROOT_CONTEXT, carrier), fn);
}

/** Runs an enqueue inside a PRODUCER span, handing it the carrier of that span's context. */
export function traceEnqueue<T>(queue: string, name: string, enqueue: (carrier: TraceCarrier | undefined) => Promise<T>): Promise<T> {
  const attributes = {
    "messaging.system": "3ngram-queue",
    "messaging.destination.name": queue,
    "messaging.operation.type": "send",
    "messaging.message.type": name,
  };
  return tracer().startActiveSpan(`send ${queue}`, { kind: SpanKind.PRODUCER, attributes }, async (span) => {
    try {
      return await enqueue(currentTraceCarrier());
    } finally {
      span.end();
    }
  });
}

/** A carrier read back from storage; anything malformed is dropped (the job runs untraced). */
export function parseTraceCarrier(stored: unknown): TraceCarrier | undefined {
  if (typeof stored !== "string" || stored.length === 0 || stored.length > 2048) return undefined;
  try {
    const value: unknown = JSON.parse(stored);
    if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
    const entries = Object.entries(value).filter((e): e is [string, string] => typeof e[1] === "string");
    return entries.length > 0 ? Object.fromEntries(entries) : undefined;
  } catch {
    return undefined;
  }
}

/** The handler, run in a CONSUMER span continuing the trace the job was enqueued in. */
export function traceJob(queue: string, handler: JobHandler): (job: Parameters<JobHandler>[0], carrier: TraceCarrier | undefined) => Promise<void> {
  return (job, carrier) => {
    const parent = carrier === undefined ? context.active() : propagation.extract(context.active(), carrier);
    const attributes = {
      "messaging.system": "3ngram-queue",
      "messaging.destination.name": queue,
      "messaging.operation.type": "process",
      "messaging.message.type": job.name,
      "messaging.message.id": job.id,
    };
    return tracer().startActiveSpan(`process ${queue}`, { kind: SpanKind.CONSUMER, attributes }, parent, async (span) => {
      try {
        await handler(job);
      } catch (err) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : "Error" });
        throw err;
      } finally {
        span.end();
      }
    });
  };
}
