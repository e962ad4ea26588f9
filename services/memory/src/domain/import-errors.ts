/**
 * How an import reports a line it could not store: the failures that stay with their line (our
 * own refusals, and the database refusing the line's values) and the result entry each becomes.
 */
import { AppError, isAppError } from "@3ngram/errors";
import type { ImportLineResult } from "@3ngram/schema";

/** Longer messages are cut, so one line's result stays small however long its error. */
const MAX_MESSAGE_LENGTH = 512;

interface PgError {
  code?: unknown;
  constraint?: unknown;
}

/**
 * A failure confined to one line: our own AppErrors, and database refusals caused by the line's
 * data (a check, a unique key raced by a concurrent import, a value out of range). Anything else
 * (the database gone, a bug) aborts the import; what was stored stays, and a re-run skips it.
 */
export function lineError(err: unknown): AppError {
  if (isAppError(err)) return err;
  const pg = err as PgError;
  const code = typeof pg?.code === "string" ? pg.code : "";
  const constraint = typeof pg?.constraint === "string" ? ` (${pg.constraint})` : "";
  if (code === "23505") return new AppError("conflict", `the line clashes with a row stored meanwhile${constraint}`);
  if (code.startsWith("23") || code.startsWith("22")) return new AppError("invalid_input", `the database refused the line's values${constraint}`);
  throw err;
}

export function errorResult(line: number, err: AppError): ImportLineResult {
  const ids = Object.values(err.details.ids ?? {});
  return {
    line,
    outcome: "error",
    ...(ids.length > 0 ? { id: ids[0]! } : {}),
    reason: err.reason,
    message: err.message.length > MAX_MESSAGE_LENGTH ? `${err.message.slice(0, MAX_MESSAGE_LENGTH - 1)}…` : err.message,
  };
}
