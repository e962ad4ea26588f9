import { uuidv7 } from "uuidv7";
import { AppError } from "@3ngram/errors";
import type { Queryable } from "@3ngram/db";
import { DEFAULT_SCOPE, type FactRecord, type RememberInput, type RememberOutput } from "@3ngram/schema";
import { insertCommitment } from "../db/commitments.js";
import { assertFact, selectFactsWrittenWith } from "../db/facts.js";
import { findLiveByContentHash, insertEvent, insertMemory, selectMemoriesByIds } from "../db/memories.js";
import { resolveWriteScope } from "../db/scopes.js";
import type { Actor } from "./deps.js";
import type { StoredEmbedding } from "./inline-embedding.js";
import { recordMemoryJobs } from "./memory-jobs.js";
import { commitmentRecord, factRecord, writtenRecord } from "./records.js";

/** What a write answers but its embedding state, already in the public shape: no handler reshapes it. */
export type WrittenMemory = Omit<RememberOutput, "embedded">;

/**
 * Writes one memory with its parts inside the caller's transaction: the scope resolved through the
 * registry (aliases, project mappings), the row itself (refusing live duplicate content), the
 * commitment row for a commitment, every fact (closing the previous generation of each), the
 * audit events and the background jobs it needs (fact extraction, and an embedding when none was
 * stored inline) in the outbox. Any failure rolls the whole transaction back, so nothing is
 * half-written and no job exists for a memory that does not.
 */
export async function writeMemory(
  db: Queryable,
  actor: Actor,
  // Revise hands in its ReviseInput, which carries these same fields and its own.
  input: RememberInput,
  parts: { contentHash: string; embedding: StoredEmbedding | null; embedFailure?: string | undefined },
): Promise<WrittenMemory> {
  const id = uuidv7();
  const scope = await resolveWriteScope(db, actor.tenantId, { scope: input.scope, project: input.project }, DEFAULT_SCOPE);
  const stored = await insertMemory(db, {
    id,
    tenantId: actor.tenantId,
    memoryType: input.memoryType,
    topic: input.topic,
    content: input.content,
    contentHash: parts.contentHash,
    scope,
    project: input.project ?? null,
    tags: input.tags,
    createdBy: actor.userId ?? null,
    embedding: parts.embedding,
    validFrom: input.validFrom !== undefined ? new Date(input.validFrom) : null,
  });
  if (!stored) {
    const existing = await findLiveByContentHash(db, actor.tenantId, parts.contentHash);
    throw duplicateMemory(existing ?? "unknown");
  }
  await insertEvent(db, {
    id: uuidv7(),
    tenantId: actor.tenantId,
    memoryId: id,
    kind: "create",
    actor: actor.kind,
    payload: {
      contentLength: input.content.length,
      embedded: parts.embedding ? "done" : "pending",
      ...(parts.embedFailure ? { embedFailure: parts.embedFailure } : {}),
    },
  });
  const commitment =
    input.memoryType === "commitment"
      ? await insertCommitment(db, {
          id: uuidv7(),
          tenantId: actor.tenantId,
          memoryId: id,
          owner: input.owner ?? null,
          dueAt: input.dueAt ? new Date(input.dueAt) : null,
        })
      : null;
  const facts: FactRecord[] = [];
  for (const [index, fact] of input.facts.entries()) {
    const asserted = await assertFact(db, {
      id: uuidv7(),
      tenantId: actor.tenantId,
      memoryId: id,
      subject: fact.subject,
      predicate: fact.predicate,
      value: fact.value,
      confidence: fact.confidence ?? null,
      validFrom: fact.validFrom ? new Date(fact.validFrom) : null,
    });
    if (!asserted) {
      throw new AppError("invalid_input", `facts.${index}.validFrom: precedes the current value's validFrom`, { field: `facts.${index}.validFrom` });
    }
    facts.push(factRecord(asserted.row));
    await insertEvent(db, {
      id: uuidv7(),
      tenantId: actor.tenantId,
      memoryId: id,
      kind: "fact",
      actor: actor.kind,
      payload: { factId: asserted.row.id, ...(asserted.closedId ? { closedFactId: asserted.closedId } : {}) },
    });
  }
  await recordMemoryJobs(db, actor.tenantId, id, { embedding: parts.embedding === null, facts: true });
  // The answer names the memory by what this write just stored; nothing is read back.
  return {
    memory: { id, memoryType: input.memoryType, topic: input.topic, scope, project: input.project ?? null },
    facts,
    ...(commitment ? { commitment: commitmentRecord(commitment) } : {}),
  };
}

/** A memory written earlier, answered as writeMemory answered for it, with its embedding state now (the replay of an idempotent write). */
export async function writtenMemory(db: Queryable, tenantId: string, memoryId: string): Promise<RememberOutput> {
  const [memory] = await selectMemoriesByIds(db, tenantId, [memoryId]);
  // The key row references the memory (ON DELETE CASCADE), so a key always names a stored memory.
  if (memory === undefined) throw new AppError("internal_error", "idempotency key names no memory");
  const facts = await selectFactsWrittenWith(db, tenantId, memoryId);
  return { ...writtenRecord(memory, facts.map(factRecord)), embedded: memory.embedded ? "done" : "pending" };
}

export function duplicateMemory(existingId: string): AppError {
  return new AppError("duplicate_memory", `content already exists as memory ${existingId}`, { ids: { existing: existingId } });
}
