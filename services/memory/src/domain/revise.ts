import { uuidv7 } from "uuidv7";
import { AppError } from "@3ngram/errors";
import { withTenant, type PoolClient } from "@3ngram/db";
import { memoryEmbeddingText } from "@3ngram/embeddings";
import type { CommitmentStatus, ReviseInput, ReviseOutput } from "@3ngram/schema";
import { applyCarriedState, freezeCommitment, lockCommitmentOfMemory, updateCommitmentStatus, type CommitmentState } from "../db/commitments.js";
import { ONE_SUCCESSOR_INDEX, insertEdge, selectHeadId, selectPredecessorEdge } from "../db/edges.js";
import { closeMemory, lockMemory, selectMemoryState } from "../db/lifecycle.js";
import { findLiveByContentHash, insertEvent, selectMemoriesByIds } from "../db/memories.js";
import type { Actor, MemoryDeps } from "./deps.js";
import { claimKey, keyedWrite, priorWrite, recordKeyedWrite, type KeyedWrite } from "./idempotency.js";
import { embedMemoryInline, type StoredEmbedding } from "./inline-embedding.js";
import { memoryNotFound, notLive, supersededConflict } from "./lifecycle-guard.js";
import { contentHash } from "./remember.js";
import { writtenRecord } from "./records.js";
import { duplicateMemory, writeMemory, writtenMemory, type WrittenMemory } from "./write-memory.js";

/**
 * Appends a successor to a live memory and links it with a supersedes or updates edge, in one
 * transaction: the predecessor's row is locked, its valid time closed (content untouched), the
 * successor written like a remembered memory, the edge and events appended, and a commitment
 * carried over. A memory has one successor: every other revise of the same predecessor answers
 * conflict naming the current head of the chain — except a repeat of the very revise that
 * succeeded, sent with its idempotency key, which answers as that revise did.
 */
export async function revise(deps: MemoryDeps, actor: Actor, input: ReviseInput): Promise<ReviseOutput> {
  const predecessorId = input.predecessorId.toLowerCase();
  const hash = contentHash(input.content);
  const scope = { role: deps.runtimeRole, tenantId: actor.tenantId };
  const keyed = keyedWrite("revise", { ...input, predecessorId });

  // Cheap answers first, so a refused revise costs no embedding. The transaction checks again.
  const prior = await withTenant(deps.pool, { ...scope, readOnly: true }, async (db) => {
    const repeated = keyed ? await priorWrite(db, actor.tenantId, keyed) : null;
    if (repeated !== null) return repeated;
    await revisableOrRepeated(db, actor.tenantId, predecessorId, keyed);
    const existing = await findLiveByContentHash(db, actor.tenantId, hash);
    if (existing !== null && existing !== predecessorId) {
      // A revise of the same predecessor that committed in between may hold this content: then
      // the answer is the conflict naming it (or, for a repeat of that revise, its result).
      const landed = await revisableOrRepeated(db, actor.tenantId, predecessorId, keyed);
      if (landed !== null) return landed;
      throw duplicateMemory(existing);
    }
    return null;
  });
  if (prior !== null) return replay(deps, actor, prior);

  const { embedding, failure } = await embedMemoryInline(deps.embedder, memoryEmbeddingText(input), deps.inlineEmbedBudgetMs);
  let written: WrittenMemory | { replayOf: string };
  try {
    written = await withTenant(deps.pool, scope, async (db) => {
      const repeated = keyed ? await claimKey(db, actor.tenantId, keyed) : null;
      if (repeated !== null) return { replayOf: repeated };
      const fresh = await reviseInTransaction(db, actor, input, predecessorId, { contentHash: hash, embedding, embedFailure: failure });
      if (keyed) await recordKeyedWrite(db, actor.tenantId, keyed, fresh.memory.id);
      return fresh;
    });
  } catch (err) {
    // The row lock makes this unreachable in practice; the unique index is the backstop.
    if (isUniqueViolation(err, ONE_SUCCESSOR_INDEX)) {
      const head = await withTenant(deps.pool, { ...scope, readOnly: true }, (db) => selectHeadId(db, actor.tenantId, predecessorId));
      throw supersededConflict(predecessorId, head);
    }
    throw err;
  }
  if ("replayOf" in written) return replay(deps, actor, written.replayOf);
  deps.jobsRecorded();
  deps.log.info(
    {
      memoryId: written.memory.id,
      predecessorId,
      edgeIntent: input.edgeIntent,
      embedded: embedding ? "done" : "pending",
      facts: written.facts.length,
      keyed: keyed !== null,
    },
    "memory revised",
  );
  return { ...written, embedded: embedding ? "done" : "pending", predecessorId, edgeIntent: input.edgeIntent };
}

/**
 * Refuses a predecessor that cannot be revised (unknown, superseded, archived). When it was
 * superseded by this very keyed revise, committed meanwhile, answers with that revise's memory.
 */
async function revisableOrRepeated(db: PoolClient, tenantId: string, predecessorId: string, keyed: KeyedWrite | null): Promise<string | null> {
  const state = await selectMemoryState(db, tenantId, predecessorId);
  if (state === null) throw memoryNotFound(predecessorId);
  const blocked = await notLive(db, tenantId, state);
  if (!blocked) return null;
  const landed = keyed ? await priorWrite(db, tenantId, keyed) : null;
  if (landed !== null) return landed;
  throw blocked;
}

/** The answer to a repeated keyed revise: the successor it stored and the edge it drew. */
async function replay(deps: MemoryDeps, actor: Actor, memoryId: string): Promise<ReviseOutput> {
  const { written, edge } = await withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId, readOnly: true }, async (db) => ({
    written: await writtenMemory(db, actor.tenantId, memoryId),
    edge: await selectPredecessorEdge(db, actor.tenantId, memoryId),
  }));
  if (edge === null) throw new AppError("internal_error", "revised memory has no predecessor edge");
  deps.log.info({ memoryId }, "idempotent repeat answered with the stored revision");
  return { ...written, predecessorId: edge.toId, edgeIntent: edge.edgeType };
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

  // The successor's valid time starts where the predecessor's ends: at the caller's validFrom, or
  // now. A successor cannot take over before its predecessor began.
  const validFrom = input.validFrom !== undefined ? new Date(input.validFrom) : null;
  if (validFrom !== null && validFrom < predecessor.validFrom) {
    throw new AppError("invalid_input", `validFrom: precedes the predecessor's validFrom (${predecessor.validFrom.toISOString()})`, { field: "validFrom" });
  }
  // Close the predecessor first: that frees its content slot, so the successor may repeat it.
  await closeMemory(db, tenantId, predecessorId, validFrom);
  const written = await writeMemory(db, actor, input, parts);
  const successorId = written.memory.id;
  await insertEdge(db, {
    id: uuidv7(),
    tenantId,
    fromId: successorId,
    toId: predecessorId,
    edgeType: input.edgeIntent,
    createdBy: actor.userId ?? null,
    actor: actor.kind,
  });
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
  return writtenRecord(memory!, written.facts);
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
