import type { Queryable } from "@3ngram/db";
import type { MemoryStatus, MemoryType } from "@3ngram/schema";

/** The lifecycle columns of one memory, as a state change needs them. */
export interface MemoryState {
  id: string;
  memoryType: MemoryType;
  status: MemoryStatus;
  validFrom: Date;
  validTo: Date | null;
}

/**
 * Locks one memory row for the rest of the transaction and reads its lifecycle state. Every state
 * change (revise, resolve, archive) takes this lock first, so they serialise per memory. After a
 * wait, PostgreSQL hands back the row as the winner left it; anything else (its successor edge)
 * must be read by a later statement, which sees the winner's commit.
 */
export async function lockMemory(db: Queryable, tenantId: string, memoryId: string): Promise<MemoryState | null> {
  const { rows } = await db.query<MemoryState>(
    `SELECT id, memory_type AS "memoryType", status, valid_from AS "validFrom", valid_to AS "validTo"
     FROM memories WHERE tenant_id = $1 AND id = $2 FOR UPDATE`,
    [tenantId, memoryId],
  );
  return rows[0] ?? null;
}

/** The same state without a lock (read-only pre-checks). */
export async function selectMemoryState(db: Queryable, tenantId: string, memoryId: string): Promise<MemoryState | null> {
  const { rows } = await db.query<MemoryState>(
    `SELECT id, memory_type AS "memoryType", status, valid_from AS "validFrom", valid_to AS "validTo" FROM memories WHERE tenant_id = $1 AND id = $2`,
    [tenantId, memoryId],
  );
  return rows[0] ?? null;
}

/**
 * Closes a live memory's valid time and records when that was learned (the second clock). Content
 * is never touched. Valid time ends at `validTo` (a revise's validFrom: the successor takes over
 * there) or, when null, now; never before it began. Returns false when the memory was not live.
 */
export async function closeMemory(db: Queryable, tenantId: string, memoryId: string, validTo: Date | null = null): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE memories SET valid_to = GREATEST(valid_from, coalesce($3::timestamptz, now())), closed_recorded_at = now()
     WHERE tenant_id = $1 AND id = $2 AND valid_to IS NULL`,
    [tenantId, memoryId, validTo],
  );
  return rowCount === 1;
}

/**
 * Archives a live, active memory. With `close`, its valid time ends too (how a blocker resolves).
 * Returns false when the memory was not live and active.
 */
export async function archiveMemory(db: Queryable, tenantId: string, memoryId: string, options: { close: boolean }): Promise<boolean> {
  const closing = options.close ? ", valid_to = GREATEST(valid_from, now()), closed_recorded_at = now()" : "";
  const { rowCount } = await db.query(
    `UPDATE memories SET status = 'archived'${closing}
     WHERE tenant_id = $1 AND id = $2 AND status = 'active' AND valid_to IS NULL`,
    [tenantId, memoryId],
  );
  return rowCount === 1;
}
