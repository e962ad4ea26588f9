import { z } from "zod";
import { maxConnectionAgeEnv, trustedKeysEnv } from "@3ngram/rpc";
import { camelCaseKeys, envLogLevel, envPort, loadConfig, type Env } from "@3ngram/runtime";
import { embeddingsConfigSchema, type EmbeddingsConfig } from "@3ngram/embeddings";

/** The environment the search service reads (names as operators set them), parsed once at boot into camelCase settings. */
export const searchConfigSchema = z
  .object({
    GRPC_HOST: z.string().default("0.0.0.0"),
    GRPC_PORT: envPort(50052),
    GRPC_MAX_CONNECTION_AGE_MS: maxConnectionAgeEnv,
    /** May point at a read replica: the search service never writes. */
    DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }),
    DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(100).default(10),
    /** Read-only database role searches run as; created by the memory service's migrations. */
    SEARCH_DB_ROLE: z
      .string()
      .regex(/^[a-z_][a-z0-9_]*$/)
      .default("threengram_search"),
    SERVICE_TRUSTED_JWKS: trustedKeysEnv,
    QUERY_EMBED_BUDGET_MS: z.coerce.number().int().min(0).max(60_000).default(2_000),
    /** Distinct recent query vectors kept in memory (LRU); 0 turns the cache off. */
    QUERY_EMBED_CACHE_SIZE: z.coerce.number().int().min(0).max(100_000).default(1_000),
    /** Query-word counts kept for the full-text probe (LRU); 0 turns the cache off. */
    SEARCH_TERM_CACHE_SIZE: z.coerce.number().int().min(0).max(1_000_000).default(50_000),
    /** How long a cached word count is trusted (ms). */
    SEARCH_TERM_CACHE_TTL_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(60_000),
    /**
     * Where the vector leg finds a first page's nearest memories: `database` walks pgvector's HNSW
     * index (approximate; the default, and the one for large tenants), `memory` scans the tenant's
     * vectors held in this process exactly (standalone's default; docs/search.md, "The vector leg").
     */
    SEARCH_VECTOR_INDEX: z.enum(["database", "memory"]).default("database"),
    /** Vectors the in-process index holds across tenants (int8: 512 bytes each at 512 dimensions); a tenant beyond it uses the database's index. */
    SEARCH_VECTOR_INDEX_MAX_VECTORS: z.coerce.number().int().min(1).max(10_000_000).default(100_000),
    METRICS_PORT: envPort(9102),
    LOG_LEVEL: envLogLevel,
  })
  .transform(camelCaseKeys);

export type SearchConfig = z.output<typeof searchConfigSchema> & { embeddings: EmbeddingsConfig };

/** The search settings and the embeddings settings (EMBEDDINGS_*, whose schema owns those names), from one environment. */
export function loadSearchConfig(env: Env = process.env): SearchConfig {
  return { ...loadConfig(searchConfigSchema, env), embeddings: loadConfig(embeddingsConfigSchema, env) };
}
