import { z } from "zod";

/** Queue names and job payloads shared by the producer (memory) and the consumer (consolidator). */
export const EMBEDDINGS_QUEUE = "embeddings";
export const EMBED_MEMORY_JOB = "embed-memory";

export const embedMemoryJobSchema = z.strictObject({
  tenantId: z.uuid(),
  memoryId: z.uuid(),
});
export type EmbedMemoryJob = z.infer<typeof embedMemoryJobSchema>;

/** Embedding retries: transient failures (model busy, memory service restarting) get five tries. */
export const EMBED_RETRY_POLICY = { attempts: 5, backoffMs: 2_000 } as const;
