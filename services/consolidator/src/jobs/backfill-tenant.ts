/**
 * Embedding backfill for one tenant: every memory still without an embedding (its inline embedding
 * and its retry job both failed, or it was stored while no model was configured) and every memory
 * embedded by another model than the configured one (a model change re-embeds the tenant). Vectors
 * go back through StoreEmbedding, which stores a vector only when the model differs, so a run that
 * overlaps a retry job, or is repeated, stores nothing twice. Bounded per run; the next run goes on.
 */
import { isAppError } from "@3ngram/errors";
import { memoryEmbeddingText, type Embedder } from "@3ngram/embeddings";
import { SCOPES } from "@3ngram/rpc";
import type { Logger } from "@3ngram/runtime";
import { MAX_GET_MEMORIES_IDS } from "@3ngram/schema";
import { callPeer, memoryCalls, parsePayload, tenantJobSchema, type ConsolidatorMemoryClient } from "./peer.js";

export const BACKFILL_TENANT_JOB = "backfill-tenant";

/** Most memories one run embeds for a tenant. */
const BACKFILL_MAX_PER_RUN = 500;
/** Read this much of each memory (the embedder cuts its input to the same length). */
const MAX_CONTENT_CHARS = 8000;

export interface BackfillTenantDeps {
  memory: Pick<ConsolidatorMemoryClient, "maintenance" | "memories">;
  embedder: Embedder;
  log: Logger;
}

export type BackfillOutcome = "backfilled" | "nothing_pending";

export async function backfillTenant(payload: unknown, deps: BackfillTenantDeps): Promise<BackfillOutcome> {
  const { tenantId } = parsePayload(BACKFILL_TENANT_JOB, tenantJobSchema, payload);
  const { memory, embedder, log } = deps;
  const identity = { tenantId, scopes: [SCOPES.read, SCOPES.internalEmbed] };
  let after: string | undefined;
  let seen = 0;
  let stored = 0;
  while (seen < BACKFILL_MAX_PER_RUN) {
    const page = await callPeer("memory", () =>
      memoryCalls(memory).maintenance.listPendingEmbeddings({ model: embedder.model, after, limit: MAX_GET_MEMORIES_IDS }, { identity }),
    );
    if (page.memoryIds.length === 0) break;
    seen += page.memoryIds.length;
    after = page.memoryIds.at(-1)!;
    const read = await callPeer("memory", () =>
      memoryCalls(memory).memories.getMemories({ ids: page.memoryIds, maxContentChars: MAX_CONTENT_CHARS }, { identity }),
    );
    if (read.memories.length > 0) {
      const vectors = await embedder.embed(read.memories.map((m) => memoryEmbeddingText(m)));
      for (const [index, record] of read.memories.entries()) {
        const vector = vectors[index];
        if (!vector || vector.length !== embedder.dimensions) throw new Error(`embedder returned no ${embedder.dimensions}-dimension vector`);
        try {
          const result = await callPeer("memory", () =>
            memoryCalls(memory).maintenance.storeEmbedding({ memoryId: record.id, model: embedder.model, vector }, { identity }),
          );
          if (result.stored) stored += 1;
        } catch (err) {
          // Gone meanwhile (an operator's erasure): nothing left to embed.
          if (!(isAppError(err) && err.reason === "not_found")) throw err;
        }
      }
    }
    if (page.memoryIds.length < MAX_GET_MEMORIES_IDS) break;
  }
  log.info({ seen, stored, model: embedder.model }, "embedding backfill done");
  return stored > 0 ? "backfilled" : "nothing_pending";
}
