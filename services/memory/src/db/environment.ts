import type { Queryable } from "@3ngram/db";

/** The counts describe_environment reports for one tenant. */
export interface TenantStatsRow {
  /** Live memories (active, not superseded) per type; types with none are absent. */
  memoriesByType: Record<string, number>;
  activeMemories: number;
  supersededMemories: number;
  archivedMemories: number;
  /** Commitments of live memories per status; statuses with none are absent. */
  commitmentsByStatus: Record<string, number>;
  /** Live memories without an embedding yet. */
  pendingEmbeddings: number;
  /** Live memories that carry a vector of the given model (0 when none is given). */
  embeddedByModel: number;
}

/**
 * Every memory is in exactly one state: archived (status archived), superseded (active but closed
 * by a successor: valid_to set) or active (live). One statement, so the numbers agree. `model` is
 * the configured embedding model, whose vectors are counted (null: none is configured).
 */
export async function selectTenantStats(db: Queryable, tenantId: string, model: string | null): Promise<TenantStatsRow> {
  const { rows } = await db.query<TenantStatsRow>(
    `WITH live AS (SELECT id, memory_type, embedding IS NULL AS pending, embedding_model = $2 AS current FROM memories
                   WHERE tenant_id = $1 AND status = 'active' AND valid_to IS NULL)
     SELECT
       COALESCE((SELECT json_object_agg(memory_type, n) FROM (SELECT memory_type, count(*)::int AS n FROM live GROUP BY memory_type) t), '{}') AS "memoriesByType",
       (SELECT count(*)::int FROM live) AS "activeMemories",
       (SELECT count(*)::int FROM memories WHERE tenant_id = $1 AND status = 'active' AND valid_to IS NOT NULL) AS "supersededMemories",
       (SELECT count(*)::int FROM memories WHERE tenant_id = $1 AND status = 'archived') AS "archivedMemories",
       COALESCE((SELECT json_object_agg(status, n) FROM (
         SELECT c.status, count(*)::int AS n FROM commitments c JOIN live ON live.id = c.memory_id
         WHERE c.tenant_id = $1 GROUP BY c.status) t), '{}') AS "commitmentsByStatus",
       (SELECT count(*)::int FROM live WHERE pending) AS "pendingEmbeddings",
       (SELECT count(*)::int FROM live WHERE current) AS "embeddedByModel"`,
    [tenantId, model],
  );
  return rows[0]!;
}

/** Proposals waiting for review, per kind. */
export interface PendingProposalsRow {
  consolidation: number;
  fact: number;
}

export async function selectPendingProposals(db: Queryable, tenantId: string): Promise<PendingProposalsRow> {
  const { rows } = await db.query<PendingProposalsRow>(
    `SELECT
       (SELECT count(*)::int FROM consolidation_proposals WHERE tenant_id = $1 AND status = 'proposed') AS consolidation,
       (SELECT count(*)::int FROM fact_proposals WHERE tenant_id = $1 AND status = 'proposed') AS fact`,
    [tenantId],
  );
  return rows[0]!;
}
