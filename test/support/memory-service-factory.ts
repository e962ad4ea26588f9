import type { Embedder } from "@3ngram/embeddings";
import { createTenantWithKey, loadMemoryConfig, startMemoryService, type RunningMemoryService } from "@3ngram/memory";
import { loadSearchConfig, startSearchService, type RunningSearchService } from "@3ngram/search";
import type { Logger } from "@3ngram/runtime";

export interface MemoryServiceOptions {
  databaseUrl: string;
  trustedJwks: string;
  redisUrl: string;
  redisPrefix: string;
  embedder: Embedder | null;
  inlineEmbedBudgetMs: number;
  log: Logger;
}

/** Boots memory (which migrates) then search, configured through the same env parsing production uses. */
export async function createMemoryService(options: MemoryServiceOptions): Promise<{
  memory: RunningMemoryService;
  search: RunningSearchService;
  createTenant(name: string): Promise<{ tenantId: string; userId: string; apiKey: string }>;
}> {
  const env = {
    DATABASE_URL: options.databaseUrl,
    SERVICE_TRUSTED_JWKS: options.trustedJwks,
    GRPC_HOST: "127.0.0.1",
    GRPC_PORT: "0",
    METRICS_PORT: "0",
    REDIS_URL: options.redisUrl,
    REDIS_KEY_PREFIX: options.redisPrefix,
    EMBED_INLINE_BUDGET_MS: String(options.inlineEmbedBudgetMs),
    EMBEDDINGS_PROVIDER: "hashing",
    LOG_LEVEL: "silent",
  };
  const memory = await startMemoryService(loadMemoryConfig(env), { embedder: options.embedder, log: options.log });
  const search = await startSearchService(loadSearchConfig(env), { embedder: options.embedder, log: options.log });
  return {
    memory,
    search,
    createTenant: (name) => createTenantWithKey(memory.pool, { tenantName: name }),
  };
}
