import type { Queryable } from "@3ngram/db";
import type { MemoryStatus, MemoryType } from "@3ngram/schema";
import { MEMORY_FROM, MEMORY_SELECT, toMemoryRow, type MemoryRow } from "./memories.js";

export interface ListFilters {
  memoryTypes: readonly MemoryType[];
  /** Every stored scope value to match (a scope with its aliases), or null for any scope. */
  scopes: readonly string[] | null;
  projects: readonly string[];
  /** active = live (not superseded) and not archived; archived = archived. */
  status: MemoryStatus;
  recordedAfter: Date | null;
  /** Inclusive at millisecond precision, the precision timestamps leave the service with. */
  recordedBefore: Date | null;
}

/**
 * One page of memories, newest first, and the exact number matching the same filters — in a
 * single statement, so the page and the total come from the same snapshot.
 */
export async function selectMemoryPage(
  db: Queryable,
  tenantId: string,
  filters: ListFilters,
  page: { limit: number; offset: number },
): Promise<{ memories: MemoryRow[]; total: number }> {
  const where = `m.tenant_id = $1
    AND (cardinality($2::text[]) = 0 OR m.memory_type = ANY($2::text[]))
    AND ($3::text[] IS NULL OR m.scope = ANY($3::text[]))
    AND (cardinality($4::text[]) = 0 OR m.project = ANY($4::text[]))
    AND (CASE WHEN $5::text = 'archived' THEN m.status = 'archived' ELSE m.status = 'active' AND m.valid_to IS NULL END)
    AND ($6::timestamptz IS NULL OR m.recorded_at >= $6::timestamptz)
    AND ($7::timestamptz IS NULL OR m.recorded_at < $7::timestamptz + interval '1 millisecond')`;
  const { rows } = await db.query<Record<string, unknown> & { total: number }>(
    `WITH total AS (SELECT count(*)::int AS total FROM memories m WHERE ${where}),
     page AS (SELECT m.id FROM memories m WHERE ${where} ORDER BY m.recorded_at DESC, m.id LIMIT $8 OFFSET $9)
     SELECT total.total, p.* FROM total
     LEFT JOIN (SELECT ${MEMORY_SELECT} FROM ${MEMORY_FROM} JOIN page ON page.id = m.id WHERE m.tenant_id = $1) p ON true
     ORDER BY p."recordedAt" DESC, p.id`,
    [tenantId, filters.memoryTypes, filters.scopes, filters.projects, filters.status, filters.recordedAfter, filters.recordedBefore, page.limit, page.offset],
  );
  const total = rows[0]?.total ?? 0;
  const memories = rows.filter((r) => r.id !== null).map(({ total: _total, ...raw }) => toMemoryRow(raw as unknown as Parameters<typeof toMemoryRow>[0]));
  return { memories, total };
}

/** Facet bound: distinct values returned per facet. */
const MAX_FACET_VALUES = 200;

/** Distinct scope and project values of the tenant's live memories, sorted by code point, each bounded. */
export async function selectFacets(db: Queryable, tenantId: string): Promise<{ scopes: string[]; projects: string[] }> {
  const live = "tenant_id = $1 AND status = 'active' AND valid_to IS NULL";
  const { rows } = await db.query<{ scopes: string[]; projects: string[] }>(
    `SELECT
       ARRAY(SELECT DISTINCT scope COLLATE "C" FROM memories WHERE ${live} ORDER BY 1 LIMIT $2) AS scopes,
       ARRAY(SELECT DISTINCT project COLLATE "C" FROM memories WHERE ${live} AND project IS NOT NULL ORDER BY 1 LIMIT $2) AS projects`,
    [tenantId, MAX_FACET_VALUES],
  );
  return rows[0] ?? { scopes: [], projects: [] };
}
