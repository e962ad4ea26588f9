import { AppError } from "@3ngram/errors";

/**
 * SQLSTATEs that mean "the server is going away or not taking work yet", never "your statement
 * is wrong": 57P01 admin shutdown (fast or immediate stop, pg_terminate_backend), 57P02 crash of
 * another backend, 57P03 cannot connect now (starting up, in recovery), 53300 too many
 * connections. Class 08 is the connection-exception class.
 */
const TRANSIENT_SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300"]);

/** Socket-level failures of the connection itself (refused while down, reset by a restart). */
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ECONNABORTED", "EAI_AGAIN"]);

/**
 * What node-postgres says when a connection ends under a query or cannot be had in time. These
 * errors carry no code, so their text is the only signal.
 */
const DRIVER_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /^Client has encountered a connection error and is not queryable/,
  /^Client was closed and is not queryable/,
];

/**
 * True when the database could not be reached or dropped the connection: a retry once it is back
 * may well succeed, so callers should see `unavailable`, not an internal error.
 */
export function isTransientDatabaseError(err: unknown): boolean {
  for (let current = err, depth = 0; current instanceof Error && depth < 4; current = current.cause, depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && (TRANSIENT_SQLSTATES.has(code) || code.startsWith("08") || NETWORK_CODES.has(code))) return true;
    if (DRIVER_MESSAGES.some((pattern) => pattern.test(current.message))) return true;
    // AggregateError: a connect to localhost tries ::1 and 127.0.0.1 and fails with both.
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.some(isTransientDatabaseError)) return true;
  }
  return false;
}

/** The error request work answers with while the database is away; the caller may retry. */
function databaseUnavailable(): AppError {
  return new AppError("unavailable", "database unavailable, retry later", { retryable: true });
}

/** A transient database failure becomes `unavailable`; anything else passes through unchanged. */
export function asUnavailable(err: unknown): unknown {
  return isTransientDatabaseError(err) ? databaseUnavailable() : err;
}
