/**
 * The gateway's HTTP surface, assembled from its parts. No listen() here (gateway.ts does that),
 * so tests can mount it on port 0 against the real services.
 *
 *   /health, /ready, /metrics       no auth, never rate limited
 *   /.well-known/*, /oauth/*        the OAuth 2.1 authorization server (docs/oauth.md); /oauth/* per-IP limited
 *   /mcp                            Origin check → per-IP limit → API key or access token → per-credential
 *                                   and per-user limits → MCP (stateless, both protocol eras)
 *   /ui/...                         the review web UI (docs/web-ui.md): per-IP limit → session cookie →
 *                                   per-credential and per-user limits → HTML pages and forms
 *   /api/v1/...                     per-IP limit → API key or access token → per-credential and per-user
 *                                   limits → JSON body → same schemas and calls as the tools
 */
import type { Logger } from "@3ngram/runtime";
import { MAX_REQUEST_BODY_BYTES } from "@3ngram/schema";
import { AppError } from "@3ngram/errors";
import type { McpHttpHandler } from "@modelcontextprotocol/server";
import express, { Router, type Express } from "express";
import { createApiKeyResolver, requireApiKey, type ApiKeyResolver } from "./auth/api-key.js";
import { createMembershipCheck } from "./auth/membership.js";
import type { MemoryPeer } from "./clients/memory.js";
import type { SearchPeer } from "./clients/search.js";
import type { PeerChecks } from "./http/health.js";
import { credentialOf, principalOf, routeLabel } from "./http/locals.js";
import { createGatewayMetrics, type GatewayMetrics } from "./http/metrics.js";
import { observeRequests } from "./http/observe.js";
import { traceRequests } from "./http/trace-requests.js";
import { countMcpRequests } from "./http/mcp-headers.js";
import { serveMcpOverNode } from "./http/mcp-adapter.js";
import { readMcpBody, refuseMalformedParams } from "./http/mcp-body.js";
import { requireAllowedOrigin } from "./http/origin.js";
import type { TrustProxy } from "./http/trust-proxy.js";
import { createMcpEndpoint } from "./mcp/server.js";
import { createAccessTokenVerifier } from "./oauth/access-token.js";
import type { ClientMetadataFetcher } from "./oauth/cimd/fetcher.js";
import type { OAuthLocation } from "./oauth/issuer.js";
import { authorizationServer } from "./oauth/router.js";
import { createSigningKeyRing, type SigningKeyRing } from "./oauth/signing-keys.js";
import { clientIpLimitKey, credentialLimitKey, userLimitKey } from "./ratelimit/keys.js";
import type { RateLimits } from "./ratelimit/limits.js";
import { limitBatchCalls, withRefusedBatchCalls } from "./ratelimit/batch.js";
import { limitRequests, mcpLimited, restLimited, type CountedLayer, type LimitedResponder, type LimitKeyOf } from "./ratelimit/middleware.js";
import { restErrorHandler, sendError } from "./rest/errors.js";
import { OPERATIONAL_ROUTES } from "./rest/operational.js";
import { mountRoutes, type RouteDeps } from "./rest/route.js";
import { API_ROUTES } from "./rest/routes.js";
import { uiLimited } from "./ui/limited.js";
import { reviewUi } from "./ui/router.js";
import { createSessionCodec, generateSessionSecret } from "./ui/session.js";

export interface GatewayAppDeps {
  memory: MemoryPeer;
  search: SearchPeer;
  log: Logger;
  /**
   * Normalised origins allowed to call /mcp from a browser: the configured ones and the server's
   * own (read per request, because the listening port is known only once the server listens).
   */
  allowedOrigins: () => readonly string[];
  /** Health checks behind /ready, one per gRPC peer. */
  peers: PeerChecks;
  metrics?: GatewayMetrics;
  /** The request budgets (Redis-backed or in-process); the completion budget feeds the default MCP handler. */
  limits: RateLimits;
  /** Express `trust proxy`: which proxies' X-Forwarded-For decides req.ip (default: none). */
  trustProxy?: TrustProxy;
  /** Defaults to resolving through `memory` with a 30 s cache. */
  resolveApiKey?: ApiKeyResolver;
  /** Defaults to a new handler; pass one to be able to close() it on shutdown. */
  mcp?: McpHttpHandler;
  /** The OAuth authorization and resource server; absent, only API keys authenticate. */
  oauth?: GatewayOAuthDeps;
  /** The review UI's session settings; absent, sessions are signed with a secret made for this app. */
  ui?: GatewayUiDeps;
}

interface GatewayUiDeps {
  /** HS256 key for the session cookie; replicas behind one address must share it. */
  sessionSecret: string;
  /** Cookies get the Secure attribute (PUBLIC_URL is https). */
  secureCookies: boolean;
}

interface GatewayOAuthDeps {
  location: OAuthLocation;
  /** Defaults to the keys the memory service holds. */
  keys?: SigningKeyRing;
  /** Resolves https client_ids (Client ID Metadata Documents); absent, such clients are refused. */
  clientMetadataFetcher?: ClientMetadataFetcher;
}

export function createGatewayApp(deps: GatewayAppDeps): Express {
  const { log } = deps;
  const metrics = deps.metrics ?? createGatewayMetrics();
  const { limits } = deps;
  const resolveApiKey = deps.resolveApiKey ?? createApiKeyResolver(deps.memory, { log });
  const isMember = createMembershipCheck(deps.memory, { log });
  const oauth = deps.oauth;
  const keys = oauth === undefined ? undefined : (oauth.keys ?? createSigningKeyRing(deps.memory));
  const authenticate = requireApiKey(
    resolveApiKey,
    log,
    oauth === undefined || keys === undefined
      ? {}
      : { verifyAccessToken: createAccessTokenVerifier(keys, oauth.location, isMember), resourceMetadataUrl: () => oauth.location.resourceMetadataUrl() },
  );
  const mcp = deps.mcp ?? createMcpEndpoint({ memory: deps.memory, search: deps.search, log, metrics, completionLimiter: limits.completion });
  const serveMcp = serveMcpOverNode(withRefusedBatchCalls(mcp), {
    maxRequestBodySize: MAX_REQUEST_BODY_BYTES,
    onerror: (error) => log.error({ error: { type: error.name } }, "mcp adapter failed"),
  });

  // Plain Express rather than createMcpExpressApp: its localhost Host guard would refuse the names
  // a pod is reached under, and Host is deliberately not validated (only Origin, below).
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", deps.trustProxy ?? false);
  app.use(traceRequests(), observeRequests(log, metrics));

  const routeDeps: RouteDeps = { memory: deps.memory, search: deps.search, log, peers: deps.peers, metrics };
  app.use(mountRoutes(OPERATIONAL_ROUTES, routeDeps));

  // The edge budget, and once the caller is known the narrower per-credential budget, then the
  // user's budget across credentials (checked in that order, counted in one round trip).
  const byAddress: CountedLayer[] = [{ limiter: limits.ip, keyOf: clientIp }];
  const byCaller: CountedLayer[] = [
    { limiter: limits.key, keyOf: byCredential },
    { limiter: limits.user, keyOf: byUser },
  ];
  // Each layer answers a refusal in its endpoint's own error shape.
  const limited = (responder: LimitedResponder) => ({
    byIp: limitRequests(byAddress, responder, { metrics, log }),
    authenticated: Router().use(authenticate, limitRequests(byCaller, responder, { metrics, log })),
  });
  const mcpLimits = limited(mcpLimited(log));
  const restLimits = limited(restLimited(log));

  if (oauth !== undefined && keys !== undefined) {
    // Registration, consent and token requests are unauthenticated by nature: the edge budget bounds them.
    app.use("/oauth", restLimits.byIp);
    app.use(
      authorizationServer({
        memory: deps.memory,
        keys,
        location: oauth.location,
        resolveApiKey,
        log,
        ...(oauth.clientMetadataFetcher ? { clientMetadataFetcher: oauth.clientMetadataFetcher } : {}),
      }),
    );
  }

  // No body is read before the Origin, limit and auth checks. Origin first (a bad Origin is refused
  // before anything is counted), then the per-IP edge limit so an unauthenticated flood is cut
  // before it costs a key resolution. Each layer charges the request one point at the door; once
  // the body is read (by the reader REST uses), a batch is charged its further calls.
  app.all(
    "/mcp",
    routeLabel("/mcp"),
    requireAllowedOrigin(deps.allowedOrigins),
    mcpLimits.byIp,
    mcpLimits.authenticated,
    readMcpBody(log),
    limitBatchCalls([...byAddress, ...byCaller], { metrics, log }),
    countMcpRequests(metrics),
    refuseMalformedParams(),
    (req, res) => serveMcp(req, res, req.body),
  );

  // The review UI: the edge budget first, then (once the session is known) the same per-credential
  // and per-user budgets the API key spends on /api/v1.
  const uiResponder = uiLimited(log);
  app.use("/ui", limitRequests(byAddress, uiResponder, { metrics, log }));
  app.use(
    "/ui",
    reviewUi({
      memory: deps.memory,
      search: deps.search,
      resolveApiKey,
      sessions: createSessionCodec(deps.ui?.sessionSecret ?? generateSessionSecret(), { membership: isMember }),
      secureCookies: () => deps.ui?.secureCookies ?? false,
      signedInLimit: limitRequests(byCaller, uiResponder, { metrics, log }),
      log,
    }),
  );

  // Every /api/v1 request, routed or not, is counted at the edge before its route authenticates.
  app.use("/api/v1", routeLabel("/api/v1"), restLimits.byIp);
  app.use(mountRoutes(API_ROUTES, routeDeps, restLimits.authenticated));

  app.use((_req, res) => sendError(res, new AppError("not_found", "no such route"), log));
  app.use(restErrorHandler(log));
  return app;
}

const clientIp: LimitKeyOf = (req) => clientIpLimitKey(req.ip);

const byCredential: LimitKeyOf = (_req, res) => {
  const credential = credentialOf(res);
  return credential === undefined ? undefined : credentialLimitKey(credential);
};

const byUser: LimitKeyOf = (_req, res) => {
  const principal = principalOf(res);
  return principal === undefined ? undefined : userLimitKey(principal);
};
