import { createHash } from "node:crypto";
import { uuidv7 } from "uuidv7";
import { AppError } from "@3ngram/errors";
import { withTenant } from "@3ngram/db";
import { memoryEmbeddingText } from "@3ngram/embeddings";
import { EMBEDDINGS_QUEUE, EMBED_MEMORY_JOB, EMBED_RETRY_POLICY, type EmbeddingState, type RememberInput } from "@3ngram/schema";
import { findLiveByContentHash, insertEvent, insertMemory, type MemoryRow } from "../db/memories.js";
import { errorSummary } from "@3ngram/runtime";
import type { Actor, MemoryDeps } from "./deps.js";
import { embedWithinBudget } from "./inline-embedding.js";

export interface RememberResult {
  memory: MemoryRow;
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

  // Cheap check first so a duplicate costs no embedding; the insert below still guards races.
  const existing = await withTenant(deps.pool, { ...scope, readOnly: true }, (db) => findLiveByContentHash(db, actor.tenantId, hash));
  if (existing) throw duplicate(existing);

  const { embedding, failure } = await embedWithinBudget(deps.embedder, memoryEmbeddingText(input), deps.inlineEmbedBudgetMs);
  const id = uuidv7();
  const memory = await withTenant(deps.pool, scope, async (db) => {
    const row = await insertMemory(db, {
      id,
      tenantId: actor.tenantId,
      memoryType: input.memoryType,
      topic: input.topic,
      content: input.content,
      contentHash: hash,
      scope: input.scope,
      project: input.project ?? null,
      tags: input.tags,
      createdBy: actor.userId ?? null,
      embedding,
    });
    if (!row) return null;
    await insertEvent(db, {
      id: uuidv7(),
      tenantId: actor.tenantId,
      memoryId: id,
      kind: "create",
      actor: actor.kind,
      payload: { contentLength: input.content.length, embedded: embedding ? "done" : "pending", ...(failure ? { embedFailure: failure } : {}) },
    });
    return row;
  });
  if (!memory) {
    const raced = await withTenant(deps.pool, { ...scope, readOnly: true }, (db) => findLiveByContentHash(db, actor.tenantId, hash));
    throw duplicate(raced ?? "unknown");
  }

  if (!embedding) await queueEmbeddingRetry(deps, actor.tenantId, id);
  deps.log.info({ memoryId: id, embedded: embedding ? "done" : "pending", contentLength: input.content.length }, "memory stored");
  return { memory, embedded: embedding ? "done" : "pending" };
}

async function queueEmbeddingRetry(deps: MemoryDeps, tenantId: string, memoryId: string): Promise<void> {
  try {
    await deps.queue.enqueue(EMBEDDINGS_QUEUE, EMBED_MEMORY_JOB, { tenantId, memoryId }, {
      jobId: `embed-${memoryId}`,
      retry: EMBED_RETRY_POLICY,
    });
  } catch (err) {
    // The memory is committed and findable by full-text search; the backfill sweep picks it up.
    deps.log.error({ memoryId, error: errorSummary(err) }, "could not queue embedding retry");
  }
}

function duplicate(existingId: string): AppError {
  return new AppError("duplicate_memory", `content already exists as memory ${existingId}`, { ids: { existing: existingId } });
}
