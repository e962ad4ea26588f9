/**
 * MCP edge of the error model: a failed tool call is an `isError` result whose text starts with
 * the stable reason code, so an agent can branch on it. Unknown errors are reduced to
 * internal_error with the request id; their messages (which could be anything) never reach the model.
 */
import { REASONS, toAppError, type AppError } from "@3ngram/errors";
import type { CallToolResult } from "@modelcontextprotocol/server";

/** Pure mapping, so every reason can be checked without a server. */
export function toolErrorText(err: AppError, requestId: string): string {
  switch (err.reason) {
    case "internal_error":
      return `internal_error: request ${requestId}`;
    case "invalid_input": {
      const field = err.details.field;
      const message = field && !err.message.startsWith(field) ? `${field}: ${err.message}` : err.message;
      return `invalid_input: ${message}`;
    }
    case "unavailable":
      return /retry later/i.test(err.message) ? `unavailable: ${err.message}` : `unavailable: ${err.message || "service unavailable"}, retry later`;
    default:
      return err.message ? `${err.reason}: ${err.message}` : err.reason;
  }
}

export function toolError(err: unknown, requestId: string): { result: CallToolResult; appError: AppError } {
  const appError = toAppError(err);
  return { result: { isError: true, content: [{ type: "text", text: toolErrorText(appError, requestId) }] }, appError };
}

export function isCallerFault(err: AppError): boolean {
  return REASONS[err.reason].callerFault;
}
