export { loadMemoryConfig, memoryConfigSchema, type MemoryConfig } from "./config.js";
export { startMemoryService, type MemoryServiceDeps, type RunningMemoryService } from "./server.js";
export { migrate, type MigrationResult } from "./db/migrate.js";
export { createTenantWithKey, type CreatedTenant } from "./domain/tenants.js";
export { issueApiKey, listApiKeys, revokeApiKey, type IssuedApiKey } from "./domain/key-admin.js";
