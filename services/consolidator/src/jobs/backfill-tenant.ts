/**
 * Embedding backfill for one tenant: every memory still without an embedding (its inline embedding
 * and its retry job both failed, or it was stored while no model was configured) and every memory
 * embedded by another model than the configured one (a model change re-embeds the tenant). Vectors
 * go back through StoreEmbedding, which stores a vector only when the model differs, so a run that
 * overlaps a retry job or another run, or is repeated, stores nothing twice.
 *
 * A run is bounded (BACKFILL_MAX_PER_RUN) so no job holds a worker for long; a run that reaches its
 * bound queues the next run of the chain, which resumes after the last memory it looked at, until
 * nothing is pending (docs/adr/0038-a-model-change-re-embeds-by-itself.md).
 */
import { isAppError } from "@3ngram/errors";
import { LOCAL_BATCH_SIZE, memoryEmbeddingText, type Embedder } from "@3ngram/embeddings";
import type { JobQueue } from "@3ngram/queue";
import { SCOPES } from "@3ngram/rpc";
import type { Logger } from "@3ngram/runtime";
import { MAINTENANCE_QUEUE } from "@3ngram/schema";
import { z } from "zod";
import { TENANT_JOB_RETRY_POLICY, callPeer, parsePayload, tenantJobSchema } from "./peer.js";
import type { ConsolidatorMemory } from "../peers.js";

export const BACKFILL_TENANT_JOB = "backfill-tenant";

/**
 * Memories embedded per call: one inference batch of the bundled model's worker pool. The pool is
 * shared with inline embedding and query vectors (in standalone, one worker does everything) and
 * takes texts first come, first served, so a write or a search waits behind at most one batch
 * (16 texts of a 12-layer model such as e5-small ~0.3 s, USE Lite ~0.13 s; docs/benchmarks.md, 2026-12-07).
 */
const BACKFILL_BATCH = LOCAL_BATCH_SIZE;
/** Most memories one run looks at: ten batches, seconds rather than minutes with the bundled model. */
const BACKFILL_MAX_PER_RUN = 10 * BACKFILL_BATCH;
/**
 * The next run of a chain waits this long: the queue's other jobs (a fresh write's embedding retry,
 * fact extraction) and the model are free in between, whatever the worker concurrency.
 */
const CONTINUE_AFTER_MS = 1_000;
/** Read this much of each memory (the embedder cuts its input to the same length). */
const MAX_CONTENT_CHARS = 8000;

/** A run of the chain: the fan-out starts one from the tenant's first memory; each successor carries where to resume. */
const backfillJobSchema = tenantJobSchema.extend({ after: z.uuid().optional() });

export interface BackfillTenantDeps {
  memory: Pick<ConsolidatorMemory, "maintenance" | "memories">;
  embedder: Embedder;
  /** Where a run that reached its bound queues the next one. */
  queue: JobQueue;
  log: Logger;
}

/** backfilled: the run got to the end; continued: it reached its bound and queued the next run. */
export type BackfillOutcome = "backfilled" | "continued" | "nothing_pending";

export async function backfillTenant(payload: unknown, deps: BackfillTenantDeps): Promise<BackfillOutcome> {
  const { tenantId, after: resumeAfter } = parsePayload(BACKFILL_TENANT_JOB, backfillJobSchema, payload);
  const { memory, embedder, log } = deps;
  const identity = { tenantId, scopes: [SCOPES.read, SCOPES.internalEmbed] };
  let after = resumeAfter;
  let seen = 0;
  let stored = 0;
  let more = false;
  while (seen < BACKFILL_MAX_PER_RUN) {
    const page = await callPeer("memory", () =>
      memory.maintenance.listPendingEmbeddings({ model: embedder.model, after, limit: BACKFILL_BATCH }, { identity }),
    );
    if (page.memoryIds.length === 0) break;
    seen += page.memoryIds.length;
    after = page.memoryIds.at(-1)!;
    const read = await callPeer("memory", () => memory.memories.getMemories({ ids: page.memoryIds, maxContentChars: MAX_CONTENT_CHARS }, { identity }));
    if (read.memories.length > 0) {
      const vectors = await embedder.embed(read.memories.map((m) => memoryEmbeddingText(m)));
      for (const [index, record] of read.memories.entries()) {
        const vector = vectors[index];
        if (!vector || vector.length !== embedder.dimensions) throw new Error(`embedder returned no ${embedder.dimensions}-dimension vector`);
        try {
          const result = await callPeer("memory", () =>
            memory.maintenance.storeEmbedding({ memoryId: record.id, model: embedder.model, vector }, { identity }),
          );
          if (result.stored) stored += 1;
        } catch (err) {
          // Gone meanwhile (an operator's erasure): nothing left to embed.
          if (!(isAppError(err) && err.reason === "not_found")) throw err;
        }
      }
    }
    more = page.memoryIds.length === BACKFILL_BATCH;
    if (!more) break;
  }
  if (more) {
    // The queues hold a job id until that job completes, so this run's own id cannot name its
    // successor; the cursor does, and the same successor queued twice (this run retried) is added
    // once. Two chains of one tenant (the schedule started one while another ran) skip what the
    // other has stored, merge when they queue the same cursor, and StoreEmbedding keeps each
    // vector once.
    await deps.queue.enqueue(
      MAINTENANCE_QUEUE,
      BACKFILL_TENANT_JOB,
      { tenantId, after },
      { jobId: `${BACKFILL_TENANT_JOB}:${tenantId}:${after}`, retry: TENANT_JOB_RETRY_POLICY, delayMs: CONTINUE_AFTER_MS },
    );
  }
  log.info({ seen, stored, model: embedder.model, continued: more }, "embedding backfill done");
  if (more) return "continued";
  return stored > 0 ? "backfilled" : "nothing_pending";
}
