/**
 * The authorization endpoint (OAuth 2.1 §4.1.1): authorization code with PKCE S256 only.
 *
 * GET validates the request and renders the consent page; POST re-validates the same parameters
 * (carried in hidden fields, trusted no more than the query string was), checks the CSRF token,
 * resolves the pasted API key, and redirects back with a single-use code. Until the client and
 * its exact redirect_uri are established, errors are shown on the page and never redirected, so
 * this endpoint cannot be used as an open redirector.
 */
import { randomBytes } from "node:crypto";
import { isAppError } from "@3ngram/errors";
import { DEFAULT_SCOPES, PUBLIC_SCOPES, SCOPES } from "@3ngram/rpc";
import { redirectUriMatches } from "@3ngram/schema";
import type { Logger } from "@3ngram/runtime";
import express, { Router, type Response } from "express";
import type { ApiKeyResolver } from "../auth/api-key.js";
import type { MemoryPeer } from "../clients/memory.js";
import { cookieValue, sameToken } from "../http/cookies.js";
import { setPageHeaders } from "../http/html-page.js";
import { requestIdOf, routeLabel, type Principal } from "../http/locals.js";
import type { ClientDirectory, KnownClient } from "./clients.js";
import { renderConsentPage, renderErrorPage } from "./consent-page.js";
import { OAuthError, singleParam } from "./errors.js";
import type { OAuthLocation } from "./issuer.js";

const CSRF_COOKIE = "oauth_csrf";
const CSRF_TTL_SECONDS = 600;
const MAX_STATE_LENGTH = 1024;
const MAX_FORM_BYTES = 16 * 1024;
const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** A request that got far enough to have a trusted place to send errors to. */
interface RedirectTarget {
  redirectUri: string;
  state: string | undefined;
}

interface ValidRequest extends RedirectTarget {
  client: KnownClient;
  codeChallenge: string;
  scopes: string[];
  resource: string;
}

/**
 * An error in a request whose client and redirect_uri are established (RFC 6749 §4.1.2.1). It is
 * shown on a page with a link back to the client, not redirected at once: anyone can register a
 * client with any redirect URI here (dynamic registration, metadata documents), so sending the
 * browser there without the user's say would make this server an open redirector (RFC 9700
 * §4.11.2).
 */
class ClientRequestError extends Error {
  constructor(
    readonly target: RedirectTarget,
    readonly code: string,
    readonly description: string,
  ) {
    super(description);
  }
}

export interface AuthorizeDeps {
  memory: MemoryPeer;
  clients: ClientDirectory;
  resolveApiKey: ApiKeyResolver;
  location: OAuthLocation;
  log: Logger;
}

async function validate(params: Record<string, unknown>, deps: AuthorizeDeps): Promise<ValidRequest> {
  const clientId = singleParam(params, "client_id") ?? "";
  const client = await deps.clients.resolve(clientId);
  const registered = client.metadata.redirect_uris;
  const asked = singleParam(params, "redirect_uri");
  // The registered string exactly, or a loopback one on another port (redirectUriMatches); the
  // code is then bound to the URI as asked, port included.
  const redirectUri =
    asked === undefined ? (registered.length === 1 ? registered[0] : undefined) : registered.some((uri) => redirectUriMatches(uri, asked)) ? asked : undefined;
  if (redirectUri === undefined) throw new OAuthError("invalid_request", "redirect_uri does not match any URI registered for this client");

  const state = singleParam(params, "state");
  if (state !== undefined && state.length > MAX_STATE_LENGTH) throw new OAuthError("invalid_request", "state is too long");
  const target = { redirectUri, state };
  const fail = (code: string, description: string) => new ClientRequestError(target, code, description);

  if (singleParam(params, "response_type") !== "code") throw fail("unsupported_response_type", "response_type must be code");
  if (!client.metadata.grant_types.includes("authorization_code"))
    throw fail("unauthorized_client", "the client did not register the authorization_code grant");
  const method = singleParam(params, "code_challenge_method");
  if (method !== "S256") throw fail("invalid_request", "PKCE is required with code_challenge_method=S256 (plain is not accepted)");
  const codeChallenge = singleParam(params, "code_challenge") ?? "";
  if (!CODE_CHALLENGE.test(codeChallenge)) throw fail("invalid_request", "code_challenge must be a base64url SHA-256 digest");

  const scopeParam = singleParam(params, "scope");
  // No scope asked for: everything but memory:erase, which a client gets only by naming it.
  const scopes = scopeParam === undefined || scopeParam.trim() === "" ? [...DEFAULT_SCOPES] : [...new Set(scopeParam.trim().split(/ +/))];
  if (scopes.some((s) => !(PUBLIC_SCOPES as readonly string[]).includes(s))) throw fail("invalid_scope", `supported scopes are ${PUBLIC_SCOPES.join(" ")}`);

  const resource = singleParam(params, "resource") ?? deps.location.mcpResource();
  if (resource !== deps.location.mcpResource()) throw fail("invalid_target", `resource must be ${deps.location.mcpResource()}`);
  return { client, redirectUri, state, codeChallenge, scopes, resource };
}

/** The client's redirect URI carrying an authorization response. */
function responseUrl(target: RedirectTarget, params: Record<string, string>, location: OAuthLocation): URL {
  const url = new URL(target.redirectUri);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  if (target.state !== undefined) url.searchParams.set("state", target.state);
  // RFC 9207: tells the client which server answered (mix-up defence).
  url.searchParams.set("iss", location.issuer());
  return url;
}

function redirectWith(res: Response, target: RedirectTarget, params: Record<string, string>, location: OAuthLocation): void {
  res.set({ "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" });
  res.redirect(302, responseUrl(target, params, location).toString());
}

/** Where a form may be posted after this page: itself, and the client's redirect target. */
function formTargetOf(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.protocol === "http:" || url.protocol === "https:" ? url.origin : url.protocol;
}

function hiddenFields(request: ValidRequest): Record<string, string> {
  return {
    response_type: "code",
    client_id: request.client.clientId,
    redirect_uri: request.redirectUri,
    code_challenge: request.codeChallenge,
    code_challenge_method: "S256",
    scope: request.scopes.join(" "),
    resource: request.resource,
    ...(request.state !== undefined ? { state: request.state } : {}),
  };
}

/** The consent page's own fields, each at most once and storable; undefined when any is not. */
function consentFields(form: Record<string, unknown>): { csrfToken?: string; decision?: string; apiKey?: string } | undefined {
  try {
    return { csrfToken: singleParam(form, "csrf_token"), decision: singleParam(form, "decision"), apiKey: singleParam(form, "api_key") };
  } catch (err) {
    if (err instanceof OAuthError) return undefined;
    throw err;
  }
}

export function authorizeRouter(deps: AuthorizeDeps): Router {
  const { log, location } = deps;
  const router = Router();
  const secureCookie = () => location.issuer().startsWith("https:");

  const showPage = (res: Response, request: ValidRequest, status: number, error?: string) => {
    const csrfToken = randomBytes(32).toString("base64url");
    res.cookie(CSRF_COOKIE, csrfToken, { httpOnly: true, sameSite: "strict", secure: secureCookie(), path: "/oauth", maxAge: CSRF_TTL_SECONDS * 1000 });
    setPageHeaders(res, { formTargets: [formTargetOf(request.redirectUri)] });
    res
      .status(status)
      .type("html")
      .send(
        renderConsentPage({
          clientName: request.client.metadata.client_name ?? request.client.clientId,
          clientId: request.client.clientId,
          redirectHost: new URL(request.redirectUri).host || request.redirectUri,
          scopes: request.scopes,
          hidden: hiddenFields(request),
          csrfToken,
          ...(error !== undefined ? { error } : {}),
        }),
      );
  };

  const showError = (res: Response, err: unknown) => {
    const oauth = err instanceof OAuthError ? err : undefined;
    const status = oauth?.status ?? 500;
    if (oauth === undefined) log.error({ request_id: requestIdOf(res), error: { type: (err as Error)?.name } }, "authorization request failed");
    else log.warn({ request_id: requestIdOf(res), oauth_error: oauth.code }, "authorization request refused");
    setPageHeaders(res);
    res
      .status(status)
      .type("html")
      .send(renderErrorPage(oauth?.description ?? "Something went wrong on our side."));
  };

  const handleFailure = (res: Response, err: unknown) => {
    if (err instanceof ClientRequestError) {
      log.warn({ request_id: requestIdOf(res), oauth_error: err.code }, "authorization request refused");
      const back = responseUrl(err.target, { error: err.code, error_description: err.description }, location);
      setPageHeaders(res);
      res.status(400).type("html").send(renderErrorPage(err.description, back.toString()));
    } else showError(res, err);
  };

  router.get("/oauth/authorize", routeLabel("GET /oauth/authorize"), async (req, res) => {
    try {
      showPage(res, await validate(req.query as Record<string, unknown>, deps), 200);
    } catch (err) {
      handleFailure(res, err);
    }
  });

  router.post("/oauth/authorize", routeLabel("POST /oauth/authorize"), express.urlencoded({ extended: false, limit: MAX_FORM_BYTES }), async (req, res) => {
    const form = (req.body ?? {}) as Record<string, unknown>;
    let request: ValidRequest;
    try {
      request = await validate(form, deps);
    } catch (err) {
      handleFailure(res, err);
      return;
    }
    // The page's own fields: a form our page did not produce (a field sent twice, text no key
    // can hold) is refused like a missing CSRF token, before anything else happens.
    const consent = consentFields(form);
    if (consent === undefined || !sameToken(cookieValue(req, CSRF_COOKIE), consent.csrfToken)) {
      log.warn({ request_id: requestIdOf(res), reason: "csrf" }, "consent form refused");
      showPage(res, request, 403, "This form expired or was not sent from this page. Please try again.");
      return;
    }
    try {
      if (consent.decision !== "allow") {
        redirectWith(res, request, { error: "access_denied", error_description: "the user denied the request" }, location);
        return;
      }
      let principal: Principal;
      try {
        // Fresh: the grant outlives any cache, so a key revoked seconds ago must not make one.
        principal = await deps.resolveApiKey(consent.apiKey ?? "", { fresh: true });
      } catch (err) {
        if (isAppError(err) && err.reason === "unauthenticated") {
          showPage(res, request, 401, "That API key was not accepted.");
          return;
        }
        throw err;
      }
      // The client gets what it asked for, but never more than the key itself may do.
      const granted = request.scopes.filter((s) => principal.scopes.includes(s));
      if (granted.length === 0) {
        redirectWith(res, request, { error: "access_denied", error_description: "the API key holds none of the requested scopes" }, location);
        return;
      }
      const { code } = await deps.memory.oauth.createAuthorizationCode(
        {
          clientId: request.client.clientId,
          redirectUri: request.redirectUri,
          codeChallenge: request.codeChallenge,
          scopes: granted,
          resource: request.resource,
        },
        { identity: { tenantId: principal.tenantId, userId: principal.userId, scopes: [SCOPES.internalAuth] } },
      );
      log.info(
        { request_id: requestIdOf(res), client_id: request.client.clientId, tenant_id: principal.tenantId, scopes: granted },
        "authorization code issued",
      );
      res.clearCookie(CSRF_COOKIE, { path: "/oauth" });
      redirectWith(res, request, { code }, location);
    } catch (err) {
      log.error(
        { request_id: requestIdOf(res), error: { type: (err as Error)?.name, reason: isAppError(err) ? err.reason : undefined } },
        "authorization failed",
      );
      redirectWith(res, request, { error: isAppError(err) && err.reason === "unavailable" ? "temporarily_unavailable" : "server_error" }, location);
    }
  });
  return router;
}
