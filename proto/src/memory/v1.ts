// The memory.v1 package as one import: the messages and every service, each context's service in
// its own .proto file (docs/adr/0033).
export * from "../gen/memory/v1/memory_pb.js";
export * from "../gen/memory/v1/api_keys_pb.js";
export * from "../gen/memory/v1/erasure_pb.js";
export * from "../gen/memory/v1/oauth_pb.js";
export * from "../gen/memory/v1/memories_service_pb.js";
export * from "../gen/memory/v1/scopes_service_pb.js";
export * from "../gen/memory/v1/orientation_service_pb.js";
export * from "../gen/memory/v1/proposals_service_pb.js";
export * from "../gen/memory/v1/maintenance_service_pb.js";
export * from "../gen/memory/v1/api_keys_service_pb.js";
export * from "../gen/memory/v1/oauth_storage_service_pb.js";
export * from "../gen/memory/v1/archive_pb.js";

import { MemoriesService } from "../gen/memory/v1/memories_service_pb.js";
import { ScopesService } from "../gen/memory/v1/scopes_service_pb.js";
import { OrientationService } from "../gen/memory/v1/orientation_service_pb.js";
import { ProposalsService } from "../gen/memory/v1/proposals_service_pb.js";
import { MaintenanceService } from "../gen/memory/v1/maintenance_service_pb.js";
import { ApiKeysService } from "../gen/memory/v1/api_keys_service_pb.js";
import { OAuthStorageService } from "../gen/memory/v1/oauth_storage_service_pb.js";
import { ArchiveService } from "../gen/memory/v1/archive_pb.js";

/**
 * Every service the memory server serves, by the name its callers use for it: one client per
 * entry over one channel (createRpcClients), one contract per entry (@3ngram/schema memoryContracts).
 */
export const memoryServices = {
  memories: MemoriesService,
  scopes: ScopesService,
  orientation: OrientationService,
  proposals: ProposalsService,
  maintenance: MaintenanceService,
  apiKeys: ApiKeysService,
  oauth: OAuthStorageService,
  archive: ArchiveService,
} as const;
