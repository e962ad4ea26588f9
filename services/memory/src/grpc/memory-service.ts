import {
  ApiKeysService,
  ArchiveService,
  MaintenanceService,
  MemoriesService,
  OAuthStorageService,
  OrientationService,
  ProposalsService,
  ScopesService,
} from "@3ngram/proto/memory/v1";
import type { RpcServer } from "@3ngram/rpc";
import type { MemoryDeps } from "../domain/deps.js";
import { apiKeyHandlers, apiKeyPolicies } from "./api-key-handlers.js";
import { archiveHandlers, archivePolicies } from "./archive-handlers.js";
import { maintenanceHandlers, maintenancePolicies } from "./maintenance-handlers.js";
import { memoriesHandlers, memoriesPolicies } from "./memories-handlers.js";
import { oauthHandlers, oauthPolicies } from "./oauth-handlers.js";
import { orientationHandlers, orientationPolicies } from "./orientation-handlers.js";
import { proposalHandlers, proposalPolicies } from "./proposal-handlers.js";
import { scopeHandlers, scopePolicies } from "./scope-handlers.js";

/** Every memory.v1 service on the one server: each bounded context's handlers and scope policy (docs/adr/0033). */
export function addMemoryServices(server: RpcServer, deps: MemoryDeps): void {
  server.addService(MemoriesService, memoriesHandlers(deps), memoriesPolicies);
  server.addService(ScopesService, scopeHandlers(deps), scopePolicies);
  server.addService(OrientationService, orientationHandlers(deps), orientationPolicies);
  server.addService(ProposalsService, proposalHandlers(deps), proposalPolicies);
  server.addService(MaintenanceService, maintenanceHandlers(deps), maintenancePolicies);
  server.addService(ApiKeysService, apiKeyHandlers(deps), apiKeyPolicies);
  server.addService(OAuthStorageService, oauthHandlers(deps), oauthPolicies);
  server.addService(ArchiveService, archiveHandlers(deps), archivePolicies);
}
