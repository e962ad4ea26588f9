/**
 * OAuth endpoints answer in RFC 6749 §5.2 form ({ error, error_description }) rather than the
 * REST envelope, because OAuth clients parse exactly that. The memory service's AppErrors are
 * mapped here, once: `unauthenticated` is a failed client authentication, `invalid_input` on the
 * field "grant" or "scope" is invalid_grant / invalid_scope, and our own failures say nothing.
 */
import { isAppError, toAppError } from "@3ngram/errors";
import { errorSummary, type Logger } from "@3ngram/runtime";
import { UNSTORABLE_TEXT_MESSAGE, isStorableText } from "@3ngram/schema";
import type { Response } from "express";
import { requestIdOf } from "../http/locals.js";

export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "invalid_scope"
  | "invalid_target"
  | "invalid_client_metadata"
  | "invalid_redirect_uri"
  | "server_error"
  | "temporarily_unavailable";

export class OAuthError extends Error {
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
    this.name = "OAuthError";
  }
}

/**
 * A parameter that may appear at most once (RFC 6749 §3.1): express parses a repeated one into an
 * array, which is refused here rather than read as one of its values. Every OAuth form and query
 * parameter is read through here, so this is also where text the database cannot store (NUL,
 * unpaired surrogates) is refused, before any lookup.
 */
export function singleParam(params: Record<string, unknown>, name: string): string | undefined {
  const value = Object.hasOwn(params, name) ? params[name] : undefined;
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw new OAuthError("invalid_request", `${name} must appear once`);
  if (!isStorableText(value)) throw new OAuthError("invalid_request", `${name} ${UNSTORABLE_TEXT_MESSAGE}`);
  return value;
}

/** The OAuth error a memory-service failure stands for. */
function oauthErrorFrom(err: unknown): OAuthError {
  if (err instanceof OAuthError) return err;
  if (!isAppError(err)) return new OAuthError("server_error", "internal error", 500);
  switch (err.reason) {
    case "unauthenticated":
      return new OAuthError("invalid_client", "client authentication failed", 401);
    case "invalid_input":
      if (err.details.field === "grant") return new OAuthError("invalid_grant", "the grant is invalid, expired, revoked or was issued to another client");
      if (err.details.field === "scope") return new OAuthError("invalid_scope", "the requested scope exceeds the grant");
      return new OAuthError("invalid_request", err.message);
    case "unavailable":
    case "rate_limited":
      return new OAuthError("temporarily_unavailable", "try again shortly", 503);
    default:
      return new OAuthError("server_error", "internal error", 500);
  }
}

/** Sends an RFC 6749 error body; never cached, never echoing a presented secret. */
export function sendOAuthError(res: Response, err: unknown, log: Logger, extraHeaders: Record<string, string> = {}): void {
  const oauth = oauthErrorFrom(err);
  const requestId = requestIdOf(res);
  if (oauth.status >= 500) log.error({ request_id: requestId, oauth_error: oauth.code, error: errorSummary(err) }, "oauth request failed");
  else log.warn({ request_id: requestId, oauth_error: oauth.code, reason: isAppError(err) ? toAppError(err).reason : undefined }, "oauth request refused");
  res.set({ "Cache-Control": "no-store", Pragma: "no-cache", ...extraHeaders });
  res.status(oauth.status).json({ error: oauth.code, error_description: oauth.description });
}
