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
    REDIS_KEY_PREFIX: z
      .string()
      .regex(/^[A-Za-z0-9_.-]+$/, "REDIS_KEY_PREFIX may use letters, digits, _ . -")
      .default("3ngram"),
    MEMORY_ADDR: z.string().min(1).default("127.0.0.1:50051"),
    /** The consolidation scan asks the search service for similar pairs. */
    SEARCH_ADDR: z.string().min(1).default("127.0.0.1:50052"),
    SERVICE_SIGNING_JWK: signingKeyEnv,
    WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
    /**
     * How long a worker holds a running job without renewing (BullMQ lock). A consolidator killed
     * mid-job has its jobs taken over by another worker once this lapses.
     */
    JOB_LOCK_MS: z.coerce.number().int().min(1_000).max(600_000).default(30_000),
    /** rules (deterministic, default) or llm (an OpenAI-compatible chat API; sends memory text to it). */
    FACT_EXTRACTOR: z.enum(["rules", "llm"]).default("rules"),
    FACT_EXTRACTOR_LLM_BASE_URL: z.url({ protocol: /^https?$/, error: "FACT_EXTRACTOR_LLM_BASE_URL must be an http(s) URL" }).optional(),
    FACT_EXTRACTOR_LLM_MODEL: z.string().min(1).max(128).optional(),
    FACT_EXTRACTOR_LLM_API_KEY: z.string().min(1).optional(),
    FACT_EXTRACTOR_LLM_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(20_000),
    /**
     * A live commitment expires this long after it fell due, so it shows as overdue (briefing) in
     * between. 0 expires it at the first sweep after its due time.
     */
    COMMITMENT_EXPIRY_GRACE_HOURS: z.coerce
      .number()
      .min(0)
      .max(24 * 365)
      .default(24),
    /** The daily OAuth GC removes registered clients unused for this many days. */
    OAUTH_CLIENT_IDLE_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
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
    if (env.FACT_EXTRACTOR === "llm") {
      for (const key of ["FACT_EXTRACTOR_LLM_BASE_URL", "FACT_EXTRACTOR_LLM_MODEL"] as const) {
        if (env[key] === undefined) ctx.addIssue({ code: "custom", message: `${key} is required when FACT_EXTRACTOR=llm`, path: [key] });
      }
    }
    return {
      redisUrl: env.REDIS_URL,
      redisKeyPrefix: env.REDIS_KEY_PREFIX,
      memoryAddr: env.MEMORY_ADDR,
      searchAddr: env.SEARCH_ADDR,
      signingJwk: env.SERVICE_SIGNING_JWK,
      workerConcurrency: env.WORKER_CONCURRENCY,
      jobLockMs: env.JOB_LOCK_MS,
      extractor:
        env.FACT_EXTRACTOR === "llm" && env.FACT_EXTRACTOR_LLM_BASE_URL !== undefined && env.FACT_EXTRACTOR_LLM_MODEL !== undefined
          ? {
              kind: "llm" as const,
              baseUrl: env.FACT_EXTRACTOR_LLM_BASE_URL,
              model: env.FACT_EXTRACTOR_LLM_MODEL,
              apiKey: env.FACT_EXTRACTOR_LLM_API_KEY,
              timeoutMs: env.FACT_EXTRACTOR_LLM_TIMEOUT_MS,
            }
          : { kind: "rules" as const },
      commitmentGraceMs: Math.round(env.COMMITMENT_EXPIRY_GRACE_HOURS * 3_600_000),
      oauthClientIdleDays: env.OAUTH_CLIENT_IDLE_DAYS,
      metricsPort: env.METRICS_PORT,
      logLevel: env.LOG_LEVEL,
      embeddings: embeddings.data as EmbeddingsConfig,
    };
  });

export type ConsolidatorConfig = z.output<typeof consolidatorConfigSchema>;
