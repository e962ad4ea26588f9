/**
 * Discovery documents: RFC 8414 authorization-server metadata, RFC 9728 protected-resource
 * metadata (for the MCP endpoint and for the server root) and the JWKS that verifies access
 * tokens. All public, all cacheable for a short while.
 */
import { PUBLIC_SCOPES } from "@3ngram/rpc";
import { OAUTH_GRANT_TYPES, TOKEN_ENDPOINT_AUTH_METHODS } from "@3ngram/schema";
import { Router } from "express";
import { routeLabel } from "../http/locals.js";
import type { OAuthLocation } from "./issuer.js";
import type { SigningKeyRing } from "./signing-keys.js";

const CACHE = "public, max-age=300";

function authorizationServerMetadata(location: OAuthLocation) {
  const issuer = location.issuer();
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    registration_endpoint: `${issuer}/oauth/register`,
    revocation_endpoint: `${issuer}/oauth/revoke`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    scopes_supported: [...PUBLIC_SCOPES],
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: [...OAUTH_GRANT_TYPES],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: [...TOKEN_ENDPOINT_AUTH_METHODS],
    revocation_endpoint_auth_methods_supported: [...TOKEN_ENDPOINT_AUTH_METHODS],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}

function protectedResourceMetadata(location: OAuthLocation, resource: string) {
  return {
    resource,
    authorization_servers: [location.issuer()],
    scopes_supported: [...PUBLIC_SCOPES],
    bearer_methods_supported: ["header"],
    resource_name: "3ngram memory",
  };
}

export function metadataRouter(location: OAuthLocation, keys: SigningKeyRing): Router {
  const router = Router();
  router.get("/.well-known/oauth-authorization-server", routeLabel("GET /.well-known/oauth-authorization-server"), (_req, res) => {
    res.set("Cache-Control", CACHE).json(authorizationServerMetadata(location));
  });
  router.get("/.well-known/oauth-protected-resource/mcp", routeLabel("GET /.well-known/oauth-protected-resource/mcp"), (_req, res) => {
    res.set("Cache-Control", CACHE).json(protectedResourceMetadata(location, location.mcpResource()));
  });
  router.get("/.well-known/oauth-protected-resource", routeLabel("GET /.well-known/oauth-protected-resource"), (_req, res) => {
    res.set("Cache-Control", CACHE).json(protectedResourceMetadata(location, location.issuer()));
  });
  router.get("/.well-known/jwks.json", routeLabel("GET /.well-known/jwks.json"), async (_req, res, next) => {
    try {
      res.set("Cache-Control", CACHE).json({ keys: await keys.publicJwks() });
    } catch (err) {
      next(err);
    }
  });
  return router;
}
