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
    },
    options.destination ?? process.stdout,
  );
}
