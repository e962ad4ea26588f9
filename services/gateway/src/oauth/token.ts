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
import { memoryApi, type MemoryApi, type MemoryClient } from "../clients/memory.js";
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
  memory: MemoryClient;
  keys: SigningKeyRing;
  location: OAuthLocation;
  log: Logger;
}

export function tokenRouter(deps: TokenDeps): Router {
  const { memory, keys, location, log } = deps;
  const identity = { scopes: [SCOPES.internalAuth] };
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: MAX_FORM_BYTES });

  router.post("/oauth/token", routeLabel("POST /oauth/token"), form, async (req, res) => {
    let basic = false;
    try {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const grantType = required(body, "grant_type");
      const client = clientCredentials(req, body);
      basic = client.basic;
      const secret = client.clientSecret !== undefined ? { clientSecret: client.clientSecret } : {};
      let grant: Awaited<ReturnType<MemoryApi["oauth"]["redeemAuthorizationCode"]>>["grant"];
      if (grantType === "authorization_code") {
        const resource = singleParam(body, "resource");
        if (resource !== undefined && resource !== location.mcpResource()) throw new OAuthError("invalid_target", `resource must be ${location.mcpResource()}`);
        ({ grant } = await memoryApi(memory).oauth.redeemAuthorizationCode(
          {
            code: required(body, "code"),
            clientId: client.clientId,
            redirectUri: required(body, "redirect_uri"),
            codeVerifier: required(body, "code_verifier"),
            ...secret,
          },
          { identity },
        ));
      } else if (grantType === "refresh_token") {
        const scope = singleParam(body, "scope");
        ({ grant } = await memoryApi(memory).oauth.refreshOAuthGrant(
          {
            refreshToken: required(body, "refresh_token"),
            clientId: client.clientId,
            scopes: scope === undefined ? [] : scope.trim().split(/ +/).filter(Boolean),
            ...secret,
          },
          { identity },
        ));
      } else {
        throw new OAuthError("unsupported_grant_type", "grant_type must be authorization_code or refresh_token");
      }
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
      await memoryApi(memory).oauth.revokeOAuthToken({ token, clientId: client.clientId, clientSecret: client.clientSecret }, { identity });
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
