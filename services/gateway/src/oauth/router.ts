/**
 * The authorization server, assembled: discovery, registration, authorization, token and
 * revocation endpoints. The gateway mounts it before its API routes.
 */
import type { Logger } from "@3ngram/runtime";
import { Router } from "express";
import type { ApiKeyResolver } from "../auth/api-key.js";
import type { MemoryPeer } from "../clients/memory.js";
import { authorizeRouter } from "./authorize.js";
import type { ClientMetadataFetcher } from "./cimd/fetcher.js";
import { createClientDirectory } from "./clients.js";
import type { OAuthLocation } from "./issuer.js";
import { metadataRouter } from "./metadata.js";
import { registrationRouter } from "./register.js";
import type { SigningKeyRing } from "./signing-keys.js";
import { tokenRouter } from "./token.js";

export interface AuthorizationServerDeps {
  memory: MemoryPeer;
  keys: SigningKeyRing;
  location: OAuthLocation;
  resolveApiKey: ApiKeyResolver;
  /** Absent: https client_ids (Client ID Metadata Documents) are refused. */
  clientMetadataFetcher?: ClientMetadataFetcher;
  log: Logger;
}

export function authorizationServer(deps: AuthorizationServerDeps): Router {
  const router = Router();
  const clients = createClientDirectory(deps.memory, deps.clientMetadataFetcher);
  router.use(metadataRouter(deps.location, deps.keys));
  router.use(registrationRouter(deps.memory, deps.log));
  router.use(authorizeRouter({ memory: deps.memory, clients, resolveApiKey: deps.resolveApiKey, location: deps.location, log: deps.log }));
  router.use(tokenRouter({ memory: deps.memory, keys: deps.keys, location: deps.location, log: deps.log }));
  return router;
}
