/**
 * Bearer authentication for /mcp and /api/v1: API keys, resolved here, and OAuth access tokens,
 * verified by ../oauth/access-token.ts. The memory service owns keys;
 * the gateway asks it to resolve each key and caches successful answers briefly, keyed by a
 * SHA-256 of the key so the key itself is never held in memory longer than the request.
 *
 * Trade-off: a revoked key keeps working for up to the cache TTL on each gateway instance. While
 * the memory service is unavailable (restarting, say), a key resolved within the last few minutes
 * keeps working, so search and the other peers stay usable; revocation cannot be learnt then
 * anyway, and it takes effect again within the TTL once memory answers.
 */
import { createHash } from "node:crypto";
import { AppError, isAppError } from "@3ngram/errors";
import { SCOPES } from "@3ngram/rpc";
import type { Logger } from "@3ngram/runtime";
import type { AuthInfo } from "@modelcontextprotocol/server";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { LRUCache } from "lru-cache";
import type { MemoryPeer } from "../clients/memory.js";
import { requestIdOf, type Credential, type Principal } from "../http/locals.js";
import { looksLikeJwt, type AccessTokenVerifier } from "../oauth/access-token.js";
import { publicScopes } from "./public-scopes.js";
import { accessTokenCredential, apiKeyCredential } from "../ratelimit/keys.js";
import { WWW_AUTHENTICATE, sendError } from "../rest/errors.js";

const API_KEY_CACHE_TTL_MS = 30_000;
/** How long after it was resolved a key is still honoured, only while memory is unavailable. */
const API_KEY_STALE_WHILE_UNAVAILABLE_MS = 5 * 60_000;
const API_KEY_CACHE_MAX_ENTRIES = 1_000;
/** Longer than any key we issue; anything bigger is refused without a round trip. */
const MAX_API_KEY_LENGTH = 512;

/** Who the key acts for, and the key's own id (what the per-credential rate limit counts). */
type ResolvedApiKey = Principal & { keyId?: string };

/**
 * `fresh` asks the memory service every time, with no cached or stale answer: for a key that is
 * about to start something that outlives the cache (a web session, an OAuth grant), so a key
 * revoked a moment ago cannot.
 */
export type ApiKeyResolver = (apiKey: string, options?: { fresh?: boolean }) => Promise<ResolvedApiKey>;

export interface ApiKeyResolverOptions {
  ttlMs?: number;
  staleWhileUnavailableMs?: number;
  maxEntries?: number;
  now?: () => number;
  log?: Logger;
}

/**
 * Resolves API keys through the memory service. Rejects with AppError: unauthenticated for an
 * unknown, revoked or malformed key; unavailable when memory cannot be reached and no recent
 * resolution of the key is cached; internal_error for anything else.
 */
export function createApiKeyResolver(memory: MemoryPeer, options: ApiKeyResolverOptions = {}): ApiKeyResolver {
  const ttlMs = options.ttlMs ?? API_KEY_CACHE_TTL_MS;
  const staleMs = Math.max(ttlMs, options.staleWhileUnavailableMs ?? API_KEY_STALE_WHILE_UNAVAILABLE_MS);
  const maxEntries = options.maxEntries ?? API_KEY_CACHE_MAX_ENTRIES;
  const now = options.now ?? Date.now;
  // Bounded by count, least recently used out first (lru-cache); freshness (ttl, and the stale window while memory is down) is judged here
  // from resolvedAt, because a stale entry must stay readable after its ttl.
  const cache = new LRUCache<string, { principal: ResolvedApiKey; resolvedAt: number }>({ max: maxEntries });

  return async (apiKey, { fresh = false } = {}) => {
    if (apiKey.length === 0 || apiKey.length > MAX_API_KEY_LENGTH) throw invalidKey();
    const digest = createHash("sha256").update(apiKey).digest("hex");
    const cached = fresh ? undefined : cache.get(digest);
    if (cached !== undefined && now() < cached.resolvedAt + ttlMs) return cached.principal;

    let response;
    try {
      response = await memory.apiKeys.resolveApiKey({ apiKey }, { identity: { scopes: [SCOPES.internalAuth] } });
    } catch (err) {
      const reason = isAppError(err) ? err.reason : "internal_error";
      if (reason === "unavailable") {
        if (cached !== undefined && now() < cached.resolvedAt + staleMs) {
          options.log?.warn({ reason }, "memory unavailable; honouring a recent key resolution");
          return { ...cached.principal, expiresAt: Math.floor(Math.min(now() + ttlMs, cached.resolvedAt + staleMs) / 1000) };
        }
        throw err;
      }
      cache.delete(digest);
      // Memory's message is safe to log (it never contains the key) and tells "unknown key" from "memory refused our credential".
      const fields = { reason, message: isAppError(err) ? err.message : undefined };
      if (reason === "unauthenticated") options.log?.debug(fields, "api key not resolved");
      else options.log?.warn(fields, "api key not resolved");
      if (reason === "internal_error" || reason === "rate_limited") throw err;
      throw invalidKey();
    }
    cache.delete(digest);
    if (!response.tenantId || !response.userId) throw invalidKey();
    const resolvedAt = now();
    const principal: ResolvedApiKey = {
      tenantId: response.tenantId,
      userId: response.userId,
      scopes: publicScopes(response.scopes),
      expiresAt: Math.floor((resolvedAt + ttlMs) / 1000),
      keyId: response.keyId,
    };
    cache.set(digest, { principal, resolvedAt });
    return principal;
  };
}

function invalidKey(): AppError {
  return new AppError("unauthenticated", "invalid API key");
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^Bearer[ ]+([\x21-\x7e]+)[ ]*$/i.exec(header);
  return match?.[1];
}

export interface BearerOptions {
  /** Verifies OAuth access tokens (JWTs); without it only API keys are accepted. */
  verifyAccessToken?: AccessTokenVerifier;
  /** RFC 9728 metadata URL advertised in 401 challenges, so MCP clients can discover OAuth. */
  resourceMetadataUrl?: () => string;
}

/**
 * Express middleware: resolves the bearer credential — an API key, or an OAuth access token
 * when a verifier is configured — stores the principal and the credential (what the
 * per-credential rate limit counts) on res.locals and the MCP AuthInfo on
 * req.auth (which toNodeHandler forwards to tool handlers as ctx.http.authInfo). Both kinds map
 * to the same Principal, so per-tool scope checks apply unchanged. Failures are answered here
 * with a 401, 503 or 500; they never reach the route.
 */
export function requireApiKey(resolve: ApiKeyResolver, log: Logger, options: BearerOptions = {}): RequestHandler {
  const challenge = () => {
    const metadata = options.resourceMetadataUrl?.();
    return metadata === undefined ? WWW_AUTHENTICATE : `${WWW_AUTHENTICATE}, resource_metadata="${metadata}"`;
  };
  return async (req: Request, res: Response, next: NextFunction) => {
    const token = bearerToken(req.headers.authorization);
    const requestId = requestIdOf(res);
    if (token === undefined) {
      res.set("WWW-Authenticate", challenge());
      sendError(res, new AppError("unauthenticated", "missing bearer credential"), log);
      return;
    }
    let principal: Principal;
    let credential: Credential;
    try {
      if (options.verifyAccessToken !== undefined && looksLikeJwt(token)) {
        const { clientId, ...verified } = await options.verifyAccessToken(token);
        principal = verified;
        credential = accessTokenCredential(clientId, verified);
      } else {
        const { keyId, ...resolved } = await resolve(token);
        principal = resolved;
        credential = apiKeyCredential(token, keyId);
      }
    } catch (err) {
      if (isAppError(err) && err.reason === "unauthenticated") res.set("WWW-Authenticate", `${challenge()}, error="invalid_token"`);
      sendError(res, err, log);
      return;
    }
    res.locals.principal = principal;
    res.locals.credential = credential;
    (req as Request & { auth?: AuthInfo }).auth = toAuthInfo(principal, requestId);
    next();
  };
}

export function toAuthInfo(principal: Principal, requestId: string): AuthInfo {
  return {
    token: "<redacted>",
    clientId: principal.userId,
    scopes: principal.scopes,
    expiresAt: principal.expiresAt,
    extra: { tenantId: principal.tenantId, userId: principal.userId, requestId },
  };
}

/** The principal and request id back out of the AuthInfo an MCP handler receives. */
export function fromAuthInfo(auth: AuthInfo | undefined): { principal: Principal; requestId: string } | undefined {
  const extra = auth?.extra;
  if (auth === undefined || extra === undefined) return undefined;
  const { tenantId, userId, requestId } = extra;
  if (typeof tenantId !== "string" || typeof userId !== "string") return undefined;
  return {
    principal: { tenantId, userId, scopes: auth.scopes, expiresAt: auth.expiresAt ?? 0 },
    requestId: typeof requestId === "string" ? requestId : "unknown",
  };
}
