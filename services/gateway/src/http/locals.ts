import type { RequestHandler, Response } from "express";

/**
 * The credential a request authenticated with: an API key, or an OAuth client's grant for one user
 * (every access token a client is issued for that user shares one budget, so refreshing a token
 * does not reset it).
 */
export type Credential = { kind: "api_key"; keyId: string } | { kind: "oauth_grant"; grant: string };

/** Who an authenticated request acts for, as resolved from its credential. */
export interface Principal {
  tenantId: string;
  userId: string;
  /** Public API scopes only (memory:read, memory:write, memory:erase). */
  scopes: string[];
  /** Seconds since the epoch after which the resolution must be refreshed. */
  expiresAt: number;
}

/*
 * Per-request values live on res.locals under these names; the accessors keep the casts in one
 * place instead of augmenting Express's global types.
 */
export function requestIdOf(res: Response): string {
  return String(res.locals.requestId ?? "unknown");
}

export function principalOf(res: Response): Principal | undefined {
  return res.locals.principal as Principal | undefined;
}

/** The credential the principal was resolved from (set together with the principal). */
export function credentialOf(res: Response): Credential | undefined {
  return res.locals.credential as Credential | undefined;
}

/** Labels the request for logs and metrics with its route template (never the raw URL, which may hold ids). */
export function routeLabel(route: string): RequestHandler {
  return (_req, res, next) => {
    res.locals.route = route;
    next();
  };
}

export function routeOf(res: Response): string {
  return typeof res.locals.route === "string" ? res.locals.route : "unmatched";
}
