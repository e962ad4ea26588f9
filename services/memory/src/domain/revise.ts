import { uuidv7 } from "uuidv7";
import { withTenant, type PoolClient } from "@3ngram/db";
import { memoryEmbeddingText } from "@3ngram/embeddings";
import type { CommitmentStatus, EdgeIntent, EmbeddingState, ReviseInput } from "@3ngram/schema";
import { applyCarriedState, freezeCommitment, lockCommitmentOfMemory, updateCommitmentStatus, type CommitmentState } from "../db/commitments.js";
import { ONE_SUCCESSOR_INDEX, insertEdge, selectHeadId } from "../db/edges.js";
import { closeMemory, lockMemory, selectMemoryState } from "../db/lifecycle.js";
import { findLiveByContentHash, insertEvent, selectMemoriesByIds } from "../db/memories.js";
import type { Actor, MemoryDeps } from "./deps.js";
import { embedWithinBudget, type StoredEmbedding } from "./inline-embedding.js";
import { memoryNotFound, notLive, supersededConflict } from "./lifecycle-guard.js";
import { queueFactExtraction } from "./proposals.js";
import { contentHash, queueEmbeddingRetry } from "./remember.js";
import { duplicateMemory, writeMemory, type WrittenMemory } from "./write-memory.js";

export interface ReviseResult extends WrittenMemory {
  embedded: EmbeddingState;
  predecessorId: string;
  edgeIntent: EdgeIntent;
}

/**
 * Appends a successor to a live memory and links it with a supersedes or updates edge, in one
 * transaction: the predecessor's row is locked, its valid time closed (content untouched), the
 * successor written like a remembered memory, the edge and events appended, and a commitment
 * carried over. A memory has one successor: every other revise of the same predecessor answers
 * conflict naming the current head of the chain.
 */
export async function revise(deps: MemoryDeps, actor: Actor, input: ReviseInput): Promise<ReviseResult> {
  const predecessorId = input.predecessorId.toLowerCase();
  const hash = contentHash(input.content);
  const scope = { role: deps.runtimeRole, tenantId: actor.tenantId };

  // Cheap answers first, so a refused revise costs no embedding. The transaction checks again.
  await withTenant(deps.pool, { ...scope, readOnly: true }, async (db) => {
    await assertRevisable(db, actor.tenantId, predecessorId);
    const existing = await findLiveByContentHash(db, actor.tenantId, hash);
    if (existing !== null && existing !== predecessorId) {
      // A revise of the same predecessor that committed in between may hold this content: then
      // the answer is the conflict naming it, as it would have been a moment earlier.
      await assertRevisable(db, actor.tenantId, predecessorId);
      throw duplicateMemory(existing);
    }
  });

  const { embedding, failure } = await embedWithinBudget(deps.embedder, memoryEmbeddingText(input), deps.inlineEmbedBudgetMs);
  let written: WrittenMemory;
  try {
    written = await withTenant(deps.pool, scope, (db) =>
      reviseInTransaction(db, actor, input, predecessorId, { contentHash: hash, embedding, embedFailure: failure }),
    );
  } catch (err) {
    // The row lock makes this unreachable in practice; the unique index is the backstop.
    if (isUniqueViolation(err, ONE_SUCCESSOR_INDEX)) {
      const head = await withTenant(deps.pool, { ...scope, readOnly: true }, (db) => selectHeadId(db, actor.tenantId, predecessorId));
      throw supersededConflict(predecessorId, head);
    }
    throw err;
  }
  if (!embedding) await queueEmbeddingRetry(deps, actor.tenantId, written.memory.id);
  // Not awaited: the answer never waits on the queue (a Redis outage must not slow remember down).
  void queueFactExtraction(deps, actor.tenantId, written.memory.id);
  deps.log.info(
    { memoryId: written.memory.id, predecessorId, edgeIntent: input.edgeIntent, embedded: embedding ? "done" : "pending", facts: written.facts.length },
    "memory revised",
  );
  return { ...written, embedded: embedding ? "done" : "pending", predecessorId, edgeIntent: input.edgeIntent };
}

async function assertRevisable(db: PoolClient, tenantId: string, predecessorId: string): Promise<void> {
  const state = await selectMemoryState(db, tenantId, predecessorId);
  if (state === null) throw memoryNotFound(predecessorId);
  const blocked = await notLive(db, tenantId, state);
  if (blocked) throw blocked;
}

async function reviseInTransaction(
  db: PoolClient,
  actor: Actor,
  input: ReviseInput,
  predecessorId: string,
  parts: { contentHash: string; embedding: StoredEmbedding | null; embedFailure?: string | undefined },
): Promise<WrittenMemory> {
  const tenantId = actor.tenantId;
  // Concurrent revises of this predecessor queue here; the first one through wins.
  const predecessor = await lockMemory(db, tenantId, predecessorId);
  if (predecessor === null) throw memoryNotFound(predecessorId);
  const blocked = await notLive(db, tenantId, predecessor);
  if (blocked) throw blocked;
  const commitment = await lockCommitmentOfMemory(db, tenantId, predecessorId);

  // Close the predecessor first: that frees its content slot, so the successor may repeat it.
  await closeMemory(db, tenantId, predecessorId);
  const written = await writeMemory(db, actor, input, parts);
  const successorId = written.memory.id;
  await insertEdge(db, { id: uuidv7(), tenantId, fromId: successorId, toId: predecessorId, edgeType: input.edgeIntent, createdBy: actor.userId ?? null, actor: actor.kind });
  const carry = await carryCommitment(db, tenantId, { successorId, commitment, input });

  await insertEvent(db, {
    id: uuidv7(),
    tenantId,
    memoryId: successorId,
    kind: "revise",
    actor: actor.kind,
    payload: { predecessorId, edgeType: input.edgeIntent, ...(carry.carriedFrom ? { carriedFromCommitmentId: carry.carriedFrom } : {}) },
  });
  await insertEvent(db, {
    id: uuidv7(),
    tenantId,
    memoryId: predecessorId,
    kind: "supersede",
    actor: actor.kind,
    payload: { successorId, edgeType: input.edgeIntent },
  });
  if (carry.resolved) {
    await insertEvent(db, {
      id: uuidv7(),
      tenantId,
      memoryId: predecessorId,
      kind: "resolve",
      actor: actor.kind,
      payload: { commitmentId: carry.resolved.commitmentId, from: carry.resolved.from, to: "resolved", successorId },
    });
  }

  // Read back: the commitment may have taken the carried state.
  const [memory] = await selectMemoriesByIds(db, tenantId, [successorId]);
  return { memory: memory!, facts: written.facts };
}

/** What a revise did to the predecessor's commitment. */
interface Carry {
  /** The predecessor's commitment whose state the successor's took over. */
  carriedFrom?: string;
  /** A live commitment resolved because its memory was revised into another type. */
  resolved?: { commitmentId: string; from: CommitmentStatus };
}

/**
 * Commitment carry-over, in the revise's transaction:
 * - commitment → commitment: the successor's commitment takes the predecessor's state (status,
 *   owner, due date, next surfacing, resolved time); dueAt and owner given in the revise win. The
 *   predecessor's row stays as the record of what it was and is never scheduled again.
 * - commitment → another type: a live (open or waiting) commitment is resolved; a finished one
 *   stays as it is.
 * - another type → commitment: writeMemory already created an open commitment.
 */
async function carryCommitment(
  db: PoolClient,
  tenantId: string,
  ctx: { successorId: string; commitment: CommitmentState | null; input: ReviseInput },
): Promise<Carry> {
  const { commitment, input } = ctx;
  if (commitment === null) return {};
  if (input.memoryType === "commitment") {
    const dueAt = input.dueAt !== undefined ? new Date(input.dueAt) : commitment.dueAt;
    await applyCarriedState(db, tenantId, ctx.successorId, {
      status: commitment.status,
      owner: input.owner ?? commitment.owner,
      dueAt,
      // A new due date reschedules surfacing the way a new commitment schedules it.
      nextSurfacingAt: input.dueAt !== undefined ? dueAt : commitment.nextSurfacingAt,
      resolvedAt: commitment.resolvedAt,
    });
    await freezeCommitment(db, tenantId, commitment.id);
    return { carriedFrom: commitment.id };
  }
  if (commitment.status === "open" || commitment.status === "waiting") {
    await updateCommitmentStatus(db, tenantId, commitment.id, "resolved");
    return { resolved: { commitmentId: commitment.id, from: commitment.status } };
  }
  return {};
}

function isUniqueViolation(err: unknown, constraint: string): boolean {
  const e = err as { code?: unknown; constraint?: unknown } | null;
  return e !== null && typeof e === "object" && e.code === "23505" && e.constraint === constraint;
}
