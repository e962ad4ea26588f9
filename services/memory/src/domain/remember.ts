import { createHash } from "node:crypto";
import { withTenant } from "@3ngram/db";
import { memoryEmbeddingText } from "@3ngram/embeddings";
import { errorSummary } from "@3ngram/runtime";
import { EMBEDDINGS_QUEUE, EMBED_MEMORY_JOB, EMBED_RETRY_POLICY, type EmbeddingState, type RememberInput } from "@3ngram/schema";
import { findLiveByContentHash } from "../db/memories.js";
import type { Actor, MemoryDeps } from "./deps.js";
import { embedWithinBudget } from "./inline-embedding.js";
import { queueFactExtraction } from "./proposals.js";
import { duplicateMemory, writeMemory, type WrittenMemory } from "./write-memory.js";

export interface RememberResult extends WrittenMemory {
  embedded: EmbeddingState;
}

export function contentHash(content: string): string {
  return createHash("sha256").update(content.trim()).digest("hex");
}

/**
 * Appends one memory. Never merges: the same live content in the same tenant is refused with
 * duplicate_memory and the existing id. Embedding happens inline within a budget; when it does
 * not finish, the memory is stored anyway and a retry job is queued, so nothing is lost.
 */
export async function remember(deps: MemoryDeps, actor: Actor, input: RememberInput): Promise<RememberResult> {
  const hash = contentHash(input.content);
  const scope = { role: deps.runtimeRole, tenantId: actor.tenantId };

  // Cheap check first so a duplicate costs no embedding; the insert still guards races.
  const existing = await withTenant(deps.pool, { ...scope, readOnly: true }, (db) => findLiveByContentHash(db, actor.tenantId, hash));
  if (existing) throw duplicateMemory(existing);

  const { embedding, failure } = await embedWithinBudget(deps.embedder, memoryEmbeddingText(input), deps.inlineEmbedBudgetMs);
  const written = await withTenant(deps.pool, scope, (db) => writeMemory(db, actor, input, { contentHash: hash, embedding, embedFailure: failure }));
  if (!embedding) await queueEmbeddingRetry(deps, actor.tenantId, written.memory.id);
  // Not awaited: the answer never waits on the queue (a Redis outage must not slow remember down).
  void queueFactExtraction(deps, actor.tenantId, written.memory.id);
  deps.log.info({ memoryId: written.memory.id, embedded: embedding ? "done" : "pending", facts: written.facts.length }, "memory stored");
  return { ...written, embedded: embedding ? "done" : "pending" };
}

export async function queueEmbeddingRetry(deps: MemoryDeps, tenantId: string, memoryId: string): Promise<void> {
  try {
    await deps.queue.enqueue(EMBEDDINGS_QUEUE, EMBED_MEMORY_JOB, { tenantId, memoryId }, {
      jobId: `embed-${memoryId}`,
      retry: EMBED_RETRY_POLICY,
    });
  } catch (err) {
    // The memory is committed and findable by full-text search; a backfill sweep picks it up.
    deps.log.error({ memoryId, error: errorSummary(err) }, "could not queue embedding retry");
  }
}
