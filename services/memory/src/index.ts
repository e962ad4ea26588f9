export { loadMemoryConfig, memoryConfigSchema } from "./config.js";
export { startMemoryService, type RunningMemoryService } from "./server.js";
export { migrate } from "./db/migrate.js";
export { createTenantWithKey, type CreatedTenant } from "./domain/tenants.js";
export { issueApiKey } from "./domain/key-admin.js";
