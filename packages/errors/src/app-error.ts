/**
 * The one error taxonomy. Domain code throws AppError with a stable snake_case reason; each
 * edge (gRPC, REST, MCP) maps the reason through the single table in reasons.ts.
 * Messages and details carry ids, field paths and hints only — never memory content or query text.
 */
import { type Reason, isReason } from "./reasons.js";

export interface ErrorDetails {
  /** Dotted path of the offending input field, e.g. "content" or "asOf.validAt". */
  field?: string;
  /** Ids the caller may need (existing duplicate, current head, …). */
  ids?: Record<string, string>;
  /** Whether retrying the same call later may succeed. */
  retryable?: boolean;
  /** How long to wait before retrying, when the thrower knows (a rate limit's window, say). */
  retryAfterMs?: number;
}

export class AppError extends Error {
  readonly reason: Reason;
  readonly details: ErrorDetails;

  constructor(reason: Reason, message: string, details: ErrorDetails = {}) {
    super(message);
    this.name = "AppError";
    this.reason = reason;
    this.details = details;
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError || (value instanceof Error && isReason((value as { reason?: unknown }).reason));
}

/** Anything that is not already an AppError becomes internal_error without leaking its message. */
export function toAppError(value: unknown): AppError {
  if (value instanceof AppError) return value;
  return new AppError("internal_error", "internal error");
}

/** Structural view of a validation issue (zod's issues fit it) so this package needs no zod import. */
export interface ValidationIssue {
  path: readonly PropertyKey[];
  message: string;
  code?: string;
}

/** Dotted field path for an issue: ["asOf", "validAt"] → "asOf.validAt"; array indexes stay numeric. */
export function issuePath(issue: ValidationIssue): string {
  return issue.path.map((p) => String(p)).join(".");
}

/** One problem with an input, as callers are told it: the dotted field and what is wrong (never the value). */
export interface InputProblem {
  field: string;
  message: string;
}

/**
 * Every problem in a list of validation issues, one per field. An issue about unknown keys names
 * each key on its own ("bogus: unrecognized key"), so the typo sits next to the key it was meant to be.
 */
export function inputProblems(issues: readonly ValidationIssue[]): InputProblem[] {
  return issues.flatMap((issue) => {
    const at = issuePath(issue);
    const unknownKeys = (issue as { keys?: unknown }).keys;
    if (issue.code === "unrecognized_keys" && Array.isArray(unknownKeys) && unknownKeys.length > 0) {
      return unknownKeys.map((key) => ({ field: [at, String(key)].filter(Boolean).join("."), message: "unrecognized key" }));
    }
    return [{ field: at === "" ? "input" : at, message: issue.message }];
  });
}

/** Turns validation issues into one invalid_input error naming the first offending field. */
export function invalidInput(issues: readonly ValidationIssue[]): AppError {
  const [first] = inputProblems(issues);
  if (!first) return new AppError("invalid_input", "invalid input");
  return new AppError("invalid_input", `${first.field}: ${first.message}`, { field: first.field });
}
