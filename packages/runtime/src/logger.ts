import { isSpanContextValid, trace } from "@opentelemetry/api";
import { pino, type Logger } from "pino";

export type { Logger } from "pino";

/**
 * Keys that may hold memory content, query text, fact values or secrets. They are removed from
 * every log line wherever they appear, as a backstop: call sites log ids, counts and lengths.
 */
const REDACTED_KEYS = [
  "content",
  "query",
  "topic",
  "value",
  "text",
  "texts",
  "input",
  "apiKey",
  "api_key",
  "authorization",
  "token",
  "password",
  "secret",
  "credential",
];

export function createLogger(options: { service: string; level?: string; destination?: NodeJS.WritableStream }): Logger {
  const paths = REDACTED_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`]);
  return pino(
    {
      level: options.level ?? "info",
      base: { service: options.service },
      redact: { paths, remove: true },
      timestamp: pino.stdTimeFunctions.isoTime,
      mixin: traceFields,
    },
    options.destination ?? process.stdout,
  );
}

/**
 * The active span's ids on every line logged inside it, so a log line leads to its trace. With
 * tracing off there is never an active span and this is one lookup that answers nothing.
 */
function traceFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (span === undefined) return {};
  const ids = span.spanContext();
  return isSpanContextValid(ids) ? { trace_id: ids.traceId, span_id: ids.spanId } : {};
}
