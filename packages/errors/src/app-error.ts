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

/**
 * Turns validation issues into one invalid_input error naming the first offending field.
 * Unknown keys are reported by their own name so "content" vs "contnet" is obvious to the caller.
 */
export function invalidInput(issues: readonly ValidationIssue[]): AppError {
  const first = issues[0];
  if (!first) return new AppError("invalid_input", "invalid input");
  const unknownKeys = (first as { keys?: unknown }).keys;
  let field = issuePath(first);
  if (first.code === "unrecognized_keys" && Array.isArray(unknownKeys) && unknownKeys.length > 0) {
    field = [field, String(unknownKeys[0])].filter(Boolean).join(".");
  }
  const where = field === "" ? "input" : field;
  return new AppError("invalid_input", `${where}: ${first.message}`, { field: where });
}
