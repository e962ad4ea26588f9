import type { Queryable } from "@3ngram/db";
import type { CommitmentStatus } from "@3ngram/schema";
import type { CommitmentRow } from "./memories.js";

const COMMITMENT_SELECT = `id, status, owner, due_at AS "dueAt", resolved_at AS "resolvedAt"`;

export async function insertCommitment(
  db: Queryable,
  commitment: { id: string; tenantId: string; memoryId: string; status?: CommitmentStatus; owner: string | null; dueAt: Date | null; resolvedAt?: Date | null },
): Promise<CommitmentRow> {
  const { rows } = await db.query<CommitmentRow>(
    `INSERT INTO commitments (id, tenant_id, memory_id, status, owner, due_at, next_surfacing_at, resolved_at)
     VALUES ($1, $2, $3, $4, $5, $6, $6, $7)
     RETURNING ${COMMITMENT_SELECT}`,
    [commitment.id, commitment.tenantId, commitment.memoryId, commitment.status ?? "open", commitment.owner, commitment.dueAt, commitment.resolvedAt ?? null],
  );
  return rows[0]!;
}

/** A commitment's full state, as a revise carries it from one memory to its successor. */
export interface CommitmentState extends CommitmentRow {
  nextSurfacingAt: Date | null;
}

/** The commitment of a memory, locked for the rest of the transaction; null when it has none. */
export async function lockCommitmentOfMemory(db: Queryable, tenantId: string, memoryId: string): Promise<CommitmentState | null> {
  const { rows } = await db.query<CommitmentState>(
    `SELECT ${COMMITMENT_SELECT}, next_surfacing_at AS "nextSurfacingAt"
     FROM commitments WHERE tenant_id = $1 AND memory_id = $2 FOR UPDATE`,
    [tenantId, memoryId],
  );
  return rows[0] ?? null;
}

/**
 * Moves a commitment to another state. Entering resolved stamps resolved_at; any other state clears
 * it. The caller checks the transition first; the database trigger refuses an illegal one anyway.
 */
export async function updateCommitmentStatus(db: Queryable, tenantId: string, commitmentId: string, status: CommitmentStatus): Promise<CommitmentRow> {
  const { rows } = await db.query<CommitmentRow>(
    `UPDATE commitments
     SET status = $3, resolved_at = CASE WHEN $3 = 'resolved' THEN now() ELSE NULL END, updated_at = now()
     WHERE tenant_id = $1 AND id = $2
     RETURNING ${COMMITMENT_SELECT}`,
    [tenantId, commitmentId, status],
  );
  return rows[0]!;
}

/**
 * Gives a memory's (freshly created, open) commitment the state carried over from its
 * predecessor's. Every carried status is one legal step from open, so the trigger accepts it.
 */
export async function applyCarriedState(
  db: Queryable,
  tenantId: string,
  memoryId: string,
  state: { status: CommitmentStatus; owner: string | null; dueAt: Date | null; nextSurfacingAt: Date | null; resolvedAt: Date | null },
): Promise<void> {
  await db.query(
    `UPDATE commitments
     SET status = $3, owner = $4, due_at = $5, next_surfacing_at = $6, resolved_at = $7, updated_at = now()
     WHERE tenant_id = $1 AND memory_id = $2`,
    [tenantId, memoryId, state.status, state.owner, state.dueAt, state.nextSurfacingAt, state.resolvedAt],
  );
}

/**
 * Freezes the commitment of a memory that was just superseded: it stays as the record of its state
 * at that moment, but is never scheduled to surface again (its successor's commitment carries on).
 */
export async function freezeCommitment(db: Queryable, tenantId: string, commitmentId: string): Promise<void> {
  await db.query("UPDATE commitments SET next_surfacing_at = NULL, updated_at = now() WHERE tenant_id = $1 AND id = $2", [tenantId, commitmentId]);
}
