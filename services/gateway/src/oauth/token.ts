/**
 * The token endpoint (authorization_code with PKCE, refresh_token with rotation) and RFC 7009
 * revocation. Clients authenticate with nothing (public, `none`), HTTP Basic
 * (client_secret_basic) or body parameters (client_secret_post), never two at once. The memory
 * service redeems and rotates; this module speaks the protocol and signs the access token.
 */
import type { Logger } from "@3ngram/runtime";
import { SCOPES } from "@3ngram/rpc";
import { isStorableText } from "@3ngram/schema";
import express, { Router, type ErrorRequestHandler, type Request } from "express";
import type { MemoryPeer } from "../clients/memory.js";
import { requestIdOf, routeLabel } from "../http/locals.js";
import { ACCESS_TOKEN_TTL_SECONDS, mintAccessToken } from "./access-token.js";
import { OAuthError, sendOAuthError, singleParam } from "./errors.js";
import type { OAuthLocation } from "./issuer.js";
import type { SigningKeyRing } from "./signing-keys.js";

const MAX_FORM_BYTES = 16 * 1024;

interface ClientCredentials {
  clientId: string;
  clientSecret?: string;
  /** Whether the caller used HTTP Basic (a failure then answers with a Basic challenge). */
  basic: boolean;
}

function required(body: Record<string, unknown>, name: string): string {
  const value = singleParam(body, name);
  if (value === undefined || value === "") throw new OAuthError("invalid_request", `${name} is required`);
  return value;
}

/** RFC 6749 §2.3.1: Basic credentials are form-urlencoded before base64. */
function clientCredentials(req: Request, body: Record<string, unknown>): ClientCredentials {
  const header = req.headers.authorization;
  const bodyId = singleParam(body, "client_id");
  const bodySecret = singleParam(body, "client_secret");
  if (header !== undefined) {
    const match = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(header.trim());
    if (match === null) throw new OAuthError("invalid_client", "unsupported Authorization scheme", 401);
    const decoded = Buffer.from(match[1]!, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon < 0 || bodySecret !== undefined) throw new OAuthError("invalid_client", "client authentication failed", 401);
    let clientId: string;
    let clientSecret: string;
    try {
      clientId = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, " "));
      clientSecret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, " "));
    } catch {
      throw new OAuthError("invalid_client", "client authentication failed", 401);
    }
    if (!isStorableText(clientId) || !isStorableText(clientSecret)) throw new OAuthError("invalid_client", "client authentication failed", 401);
    if (bodyId !== undefined && bodyId !== clientId) throw new OAuthError("invalid_client", "client authentication failed", 401);
    return { clientId, clientSecret, basic: true };
  }
  if (bodyId === undefined || bodyId === "") throw new OAuthError("invalid_client", "client_id is required", 401);
  return { clientId: bodyId, ...(bodySecret !== undefined ? { clientSecret: bodySecret } : {}), basic: false };
}

export interface TokenDeps {
  memory: MemoryPeer;
  keys: SigningKeyRing;
  location: OAuthLocation;
  log: Logger;
}

type Grant = Awaited<ReturnType<MemoryPeer["oauth"]["redeemAuthorizationCode"]>>["grant"];

/** What a grant type's redemption gets: the form, the authenticated client, and where to ask. */
interface Redemption {
  body: Record<string, unknown>;
  client: ClientCredentials;
  deps: TokenDeps;
}

const INTERNAL_AUTH = { identity: { scopes: [SCOPES.internalAuth] } };

const secretOf = (client: ClientCredentials) => (client.clientSecret !== undefined ? { clientSecret: client.clientSecret } : {});

/** RFC 6749 §4.1.3 with PKCE (RFC 7636): a code for a grant, for this resource only (RFC 8707). */
async function redeemAuthorizationCode({ body, client, deps }: Redemption): Promise<Grant> {
  const resource = singleParam(body, "resource");
  if (resource !== undefined && resource !== deps.location.mcpResource())
    throw new OAuthError("invalid_target", `resource must be ${deps.location.mcpResource()}`);
  const request = {
    code: required(body, "code"),
    clientId: client.clientId,
    redirectUri: required(body, "redirect_uri"),
    codeVerifier: required(body, "code_verifier"),
    ...secretOf(client),
  };
  return (await deps.memory.oauth.redeemAuthorizationCode(request, INTERNAL_AUTH)).grant;
}

/** RFC 6749 §6: a refresh token for the grant, rotated; `scope` may only narrow it. */
async function refreshGrant({ body, client, deps }: Redemption): Promise<Grant> {
  const scope = singleParam(body, "scope");
  const request = {
    refreshToken: required(body, "refresh_token"),
    clientId: client.clientId,
    scopes: scope === undefined ? [] : scope.trim().split(/ +/).filter(Boolean),
    ...secretOf(client),
  };
  return (await deps.memory.oauth.refreshOAuthGrant(request, INTERNAL_AUTH)).grant;
}

/** The grant types the endpoint redeems, one handler each. */
const GRANT_TYPES: Readonly<Record<string, (redemption: Redemption) => Promise<Grant>>> = {
  authorization_code: redeemAuthorizationCode,
  refresh_token: refreshGrant,
};

export function tokenRouter(deps: TokenDeps): Router {
  const { memory, keys, location, log } = deps;
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: MAX_FORM_BYTES });

  router.post("/oauth/token", routeLabel("POST /oauth/token"), form, async (req, res) => {
    let basic = false;
    try {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const grantType = required(body, "grant_type");
      const client = clientCredentials(req, body);
      basic = client.basic;
      const redeem = Object.hasOwn(GRANT_TYPES, grantType) ? GRANT_TYPES[grantType] : undefined;
      if (redeem === undefined) throw new OAuthError("unsupported_grant_type", `grant_type must be ${Object.keys(GRANT_TYPES).join(" or ")}`);
      const grant = await redeem({ body, client, deps });
      // A grant minted for another resource must never become a token for this one.
      if (grant.resource !== location.mcpResource()) throw new OAuthError("invalid_grant", "the grant was issued for another resource");
      const accessToken = await mintAccessToken(keys, location, {
        tenantId: grant.tenantId,
        userId: grant.userId,
        clientId: grant.clientId,
        scopes: grant.scopes,
      });
      log.info(
        {
          request_id: requestIdOf(res),
          grant_type: grantType,
          client_id: grant.clientId,
          tenant_id: grant.tenantId,
          refresh: grant.refreshToken !== undefined,
        },
        "oauth tokens issued",
      );
      res.set({ "Cache-Control": "no-store", Pragma: "no-cache" });
      res.json({
        access_token: accessToken,
        token_type: "Bearer",
        expires_in: ACCESS_TOKEN_TTL_SECONDS,
        scope: grant.scopes.join(" "),
        ...(grant.refreshToken !== undefined ? { refresh_token: grant.refreshToken } : {}),
      });
    } catch (err) {
      sendOAuthError(res, err, log, basic ? { "WWW-Authenticate": 'Basic realm="3ngram"' } : {});
    }
  });

  router.post("/oauth/revoke", routeLabel("POST /oauth/revoke"), form, async (req, res) => {
    try {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const client = clientCredentials(req, body);
      const token = required(body, "token");
      await memory.oauth.revokeOAuthToken({ token, clientId: client.clientId, clientSecret: client.clientSecret }, INTERNAL_AUTH);
      // RFC 7009 §2.2: unknown tokens (and access tokens, which expire on their own) answer 200 too.
      res.set({ "Cache-Control": "no-store" }).status(200).end();
    } catch (err) {
      sendOAuthError(res, err, log);
    }
  });

  router.use(["/oauth/token", "/oauth/revoke"], ((err, _req, res, next) => {
    if (res.headersSent) return next(err);
    sendOAuthError(res, new OAuthError("invalid_request", "the body must be application/x-www-form-urlencoded, at most 16 KiB"), log);
  }) as ErrorRequestHandler);
  return router;
}
