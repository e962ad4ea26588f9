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

/**
 * Per-memory job retries: 2 s doubling to a 60 s cap, ten attempts, about five minutes in all, so
 * a job outlasts a peer or database restart (a backlog retried 2+4+8+16 s used its attempts up in
 * half a minute). One that still fails as unavailable is re-driven by the consolidator later.
 */
const MEMORY_JOB_RETRY_POLICY = { attempts: 10, backoffMs: 2_000, maxBackoffMs: 60_000 } as const;

/** Embedding retries: the model may be busy or the memory service restarting. */
export const EMBED_RETRY_POLICY = MEMORY_JOB_RETRY_POLICY;

/**
 * Fact extraction: the memory service queues one job per new memory (after remember, revise and
 * import commit); the consolidator reads the memory, runs the extractor and hands the results
 * back as fact proposals. Idempotent: proposing the same fact twice stores it once.
 */
export const EXTRACTION_QUEUE = "extraction";
export const EXTRACT_FACTS_JOB = "extract-facts";

export const extractFactsJobSchema = memoryJobSchema;

/** Extraction retries like an embedding: the memory service or the extractor may be briefly away. */
export const EXTRACT_RETRY_POLICY = MEMORY_JOB_RETRY_POLICY;

/** Scheduled and per-tenant maintenance (consolidation scan, embedding backfill, commitment sweep). */
export const MAINTENANCE_QUEUE = "maintenance";

/**
 * Why a dead-lettered job failed: `unavailable` (a peer or the database was away through every
 * attempt; re-driven automatically), `permanent` (it can never succeed as it is) or `error`.
 */
export const JOB_FAILURE_CAUSES = ["unavailable", "permanent", "error"] as const;
export type JobFailureCause = (typeof JOB_FAILURE_CAUSES)[number];

/** Every queue the consolidator consumes, for whoever reports their depth and dead letters. */
export const CONSOLIDATOR_QUEUES = [EMBEDDINGS_QUEUE, EXTRACTION_QUEUE, MAINTENANCE_QUEUE] as const;
