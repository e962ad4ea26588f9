import { z } from "zod";
import { embeddingsConfigSchema, type EmbeddingsConfig } from "@3ngram/embeddings";
import { envLogLevel, envPort } from "@3ngram/runtime";
import { signingKeyEnv } from "@3ngram/rpc";

/**
 * The environment the consolidator reads. Unknown variables pass through to the embeddings
 * schema (EMBEDDINGS_*), which owns their names and rules.
 */
export const consolidatorConfigSchema = z
  .looseObject({
    REDIS_URL: z.url({ protocol: /^rediss?$/, error: "REDIS_URL must be a redis:// or rediss:// URL" }).default("redis://127.0.0.1:6379"),
    /** Namespace of every BullMQ key; the memory service must use the same one. */
    REDIS_KEY_PREFIX: z.string().regex(/^[A-Za-z0-9_.-]+$/, "REDIS_KEY_PREFIX may use letters, digits, _ . -").default("3ngram"),
    MEMORY_ADDR: z.string().min(1).default("127.0.0.1:50051"),
    /** Not called yet; the consolidation scan will use it. Part of the contract so deployments set it now. */
    SEARCH_ADDR: z.string().min(1).default("127.0.0.1:50052"),
    SERVICE_SIGNING_JWK: signingKeyEnv,
    WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
    /** 0 turns the /metrics and /healthz listener off. */
    METRICS_PORT: envPort(9103),
    LOG_LEVEL: envLogLevel,
  })
  .transform((env, ctx) => {
    const embeddings = embeddingsConfigSchema.safeParse(env);
    if (!embeddings.success) {
      for (const issue of embeddings.error.issues) ctx.addIssue({ code: "custom", message: issue.message, path: issue.path });
      return z.NEVER;
    }
    return {
      redisUrl: env.REDIS_URL,
      redisKeyPrefix: env.REDIS_KEY_PREFIX,
      memoryAddr: env.MEMORY_ADDR,
      searchAddr: env.SEARCH_ADDR,
      signingJwk: env.SERVICE_SIGNING_JWK,
      workerConcurrency: env.WORKER_CONCURRENCY,
      metricsPort: env.METRICS_PORT,
      logLevel: env.LOG_LEVEL,
      embeddings: embeddings.data as EmbeddingsConfig,
    };
  });

export type ConsolidatorConfig = z.output<typeof consolidatorConfigSchema>;
