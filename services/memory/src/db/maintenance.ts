import type { Queryable } from "@3ngram/db";

/**
 * Tenant ids in id order, after `after`. Only inside a transaction with no tenant bound, and only
 * through the directory policy (migration 0003), which this statement switches on for the rest of
 * its transaction; nothing but ids is read.
 */
export async function selectTenantIds(db: Queryable, after: string | null, limit: number): Promise<string[]> {
  await db.query("SELECT set_config('app.tenant_directory', 'on', true)");
  const { rows } = await db.query<{ id: string }>("SELECT id FROM tenants WHERE ($1::uuid IS NULL OR id > $1::uuid) ORDER BY id LIMIT $2", [after, limit]);
  return rows.map((r) => r.id);
}

/**
 * Memories of a tenant still waiting for an embedding, or embedded by another model than `model`
 * (a model change re-embeds everything), in id order after `after`. Superseded and archived
 * memories count too: search keeps ranking them below their successors. Erased ones never do.
 */
export async function selectPendingEmbeddingIds(db: Queryable, tenantId: string, model: string, after: string | null, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM memories
      WHERE tenant_id = $1 AND (embedding IS NULL OR embedding_model IS DISTINCT FROM $2) AND erased_at IS NULL
        AND ($3::uuid IS NULL OR id > $3::uuid)
      ORDER BY id LIMIT $4`,
    [tenantId, model, after, limit],
  );
  return rows.map((r) => r.id);
}

/**
 * Memories whose live commitment (open or waiting, memory active with its valid time open) was
 * due before `dueBefore`, most overdue first. The caller moves each through the state machine.
 * A commitment someone reopened after its due time (an `unresolve` event since) is left alone: they
 * decided it still stands, and the sweep would otherwise expire it again at once.
 */
export async function selectOverdueCommitmentMemoryIds(db: Queryable, tenantId: string, dueBefore: Date, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ memoryId: string }>(
    `SELECT c.memory_id AS "memoryId"
       FROM commitments c
       JOIN memories m ON m.tenant_id = c.tenant_id AND m.id = c.memory_id
      WHERE c.tenant_id = $1 AND c.status IN ('open', 'waiting') AND c.due_at < $2
        AND m.status = 'active' AND m.valid_to IS NULL
        AND NOT EXISTS (SELECT 1 FROM memory_events e
                         WHERE e.tenant_id = c.tenant_id AND e.memory_id = c.memory_id
                           AND e.event_kind = 'unresolve' AND e.created_at >= c.due_at)
      ORDER BY c.due_at, c.id
      LIMIT $3`,
    [tenantId, dueBefore, limit],
  );
  return rows.map((r) => r.memoryId);
}
