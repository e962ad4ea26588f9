/**
 * Failures Express and its body parsers raise while reading a request, before any route runs:
 * a path segment that is not valid percent-encoding, a body that cannot be decompressed or
 * decoded, a malformed or oversized body. They are the caller's doing, so they answer 4xx, and
 * their messages (which quote the raw path or body) are never logged or returned.
 */
import { isAppError, type Reason } from "@3ngram/errors";

export interface RequestFault {
  status: number;
  reason: Extract<Reason, "invalid_input" | "not_found">;
  detail: string;
}

/** The fault a pre-route failure stands for, or undefined for anything else (a route's own error, or ours). */
export function requestFault(err: unknown, limits: { maxBodyBytes: number }): RequestFault | undefined {
  if (!(err instanceof Error) || isAppError(err)) return undefined;
  // The router could not decode a path parameter: no resource has such an id.
  if (err instanceof URIError) return { status: 404, reason: "not_found", detail: "no such resource" };
  const { type, status, expose } = err as { type?: unknown; status?: unknown; expose?: unknown };
  // body-parser marks what it raises with http-errors' status and expose; a zlib failure on a body
  // that is not really compressed comes through the same way, without a type.
  if (expose !== true || typeof status !== "number" || status < 400 || status >= 500) return undefined;
  switch (type) {
    case "entity.parse.failed":
      return { status: 400, reason: "invalid_input", detail: "malformed JSON body" };
    case "entity.too.large":
      return { status: 413, reason: "invalid_input", detail: `request body exceeds ${limits.maxBodyBytes} bytes` };
    case "encoding.unsupported":
      return { status: 415, reason: "invalid_input", detail: "unsupported Content-Encoding" };
    case "charset.unsupported":
      return { status: 415, reason: "invalid_input", detail: "unsupported charset" };
    default:
      return { status: 400, reason: "invalid_input", detail: "unreadable request body (is Content-Encoding right?)" };
  }
}
