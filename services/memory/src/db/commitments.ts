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
