import { z } from "zod";
import { maxConnectionAgeEnv, trustedKeysEnv } from "@3ngram/rpc";
import { camelCaseKeys, envBool, envLogLevel, envPort, loadConfig, type Env } from "@3ngram/runtime";
import { embeddingsConfigSchema, type EmbeddingsConfig } from "@3ngram/embeddings";

/** Database role request work runs as; created by the migrations. The command line reads it alone. */
export const runtimeDbRoleEnv = z
  .string()
  .regex(/^[a-z_][a-z0-9_]*$/)
  .default("threengram_app");

/**
 * The environment the memory service reads (SCREAMING_SNAKE, as operators set it), parsed once at
 * boot and handed down as one camelCase value; nothing below this file sees a variable's name.
 */
export const memoryConfigSchema = z
  .object({
    GRPC_HOST: z.string().default("0.0.0.0"),
    GRPC_PORT: envPort(50051),
    GRPC_MAX_CONNECTION_AGE_MS: maxConnectionAgeEnv,
    DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }),
    DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(100).default(10),
    RUNTIME_DB_ROLE: runtimeDbRoleEnv,
    REDIS_URL: z.url({ protocol: /^rediss?$/ }).default("redis://127.0.0.1:6379"),
    /** Namespaces every queue key, so several deployments (or test runs) can share one Redis. */
    REDIS_KEY_PREFIX: z.string().min(1).default("3ngram"),
    SERVICE_TRUSTED_JWKS: trustedKeysEnv,
    EMBED_INLINE_BUDGET_MS: z.coerce.number().int().min(0).max(60_000).default(2_000),
    MIGRATE_ON_START: envBool(true),
    METRICS_PORT: envPort(9101),
    LOG_LEVEL: envLogLevel,
  })
  .transform(camelCaseKeys);

export type MemoryConfig = z.output<typeof memoryConfigSchema> & { embeddings: EmbeddingsConfig };

export function loadMemoryConfig(env: Env = process.env): MemoryConfig {
  return { ...loadConfig(memoryConfigSchema, env), embeddings: loadConfig(embeddingsConfigSchema, env) };
}
