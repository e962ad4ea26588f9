import { z } from "zod";

/** Queue names and job payloads shared by the producer (memory) and the consumer (consolidator). */
export const EMBEDDINGS_QUEUE = "embeddings";
export const EMBED_MEMORY_JOB = "embed-memory";

/** A job about one memory of one tenant: what both per-memory queues carry. */
const memoryJobSchema = z.strictObject({
  tenantId: z.uuid(),
  memoryId: z.uuid(),
});

export const embedMemoryJobSchema = memoryJobSchema;
export type EmbedMemoryJob = z.infer<typeof embedMemoryJobSchema>;

/** Embedding retries: transient failures (model busy, memory service restarting) get five tries. */
export const EMBED_RETRY_POLICY = { attempts: 5, backoffMs: 2_000 } as const;

/**
 * Fact extraction: the memory service queues one job per new memory (after remember, revise and
 * import commit); the consolidator reads the memory, runs the extractor and hands the results
 * back as fact proposals. Idempotent: proposing the same fact twice stores it once.
 */
export const EXTRACTION_QUEUE = "extraction";
export const EXTRACT_FACTS_JOB = "extract-facts";

export const extractFactsJobSchema = memoryJobSchema;
export type ExtractFactsJob = z.infer<typeof extractFactsJobSchema>;

/** Extraction retries like an embedding: the memory service or the extractor may be briefly away. */
export const EXTRACT_RETRY_POLICY = { attempts: 5, backoffMs: 2_000 } as const;

/** Scheduled and per-tenant maintenance (consolidation scan, embedding backfill, commitment sweep). */
export const MAINTENANCE_QUEUE = "maintenance";

/** Every queue the consolidator consumes, for whoever reports their depth and dead letters. */
export const CONSOLIDATOR_QUEUES = [EMBEDDINGS_QUEUE, EXTRACTION_QUEUE, MAINTENANCE_QUEUE] as const;
