import type { Queryable } from "@3ngram/db";
import type { MemoryType } from "@3ngram/schema";

export interface PairRow {
  newerId: string;
  olderId: string;
  newerType: MemoryType;
  olderType: MemoryType;
  similarity: number;
}

export interface PairScan {
  tenantId: string;
  /** Only vectors from this model and of this dimension are compared. */
  model: string;
  dimensions: number;
  minSimilarity: number;
  scanRows: number;
  neighboursPerRow: number;
  limit: number;
}

/**
 * Near pairs among a tenant's live memories (active, valid time open): for each of the most recent
 * `scanRows` live embedded memories, its nearest live neighbours through the HNSW index (a LATERAL
 * kNN per row; the caller's transaction sets a wide candidate list and iterative scan so the filters
 * still fill each row's k). Each unordered pair appears once, oriented newer → older by recorded
 * time (id breaks ties), skipping pairs an edge already links or that were ever proposed. Most
 * similar first, at most `limit`.
 */
export async function selectSimilarPairs(db: Queryable, scan: PairScan): Promise<{ pairs: PairRow[]; scanned: number }> {
  // The dimension is baked into the casts so the per-dimension partial HNSW index applies.
  const dim = Number(scan.dimensions);
  if (!Number.isInteger(dim) || dim < 1 || dim > 2000) throw new Error("invalid vector dimension");

  const live = `tenant_id = $1 AND status = 'active' AND valid_to IS NULL AND embedding_dim = ${dim} AND embedding_model = $2`;
  const { rows: counted } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM (SELECT 1 FROM memories WHERE ${live} LIMIT $3) s`, [
    scan.tenantId,
    scan.model,
    scan.scanRows,
  ]);
  const { rows } = await db.query<PairRow>(
    `WITH anchors AS (
       SELECT id, memory_type, recorded_at, embedding::vector(${dim}) AS v
         FROM memories
        WHERE ${live}
        ORDER BY recorded_at DESC, id DESC
        LIMIT $3
     ),
     near AS (
       SELECT a.id AS a_id, a.memory_type AS a_type, a.recorded_at AS a_at,
              n.id AS b_id, n.memory_type AS b_type, n.recorded_at AS b_at, 1 - n.distance AS similarity
         FROM anchors a
         CROSS JOIN LATERAL (
           SELECT b.id, b.memory_type, b.recorded_at, b.embedding::vector(${dim}) <=> a.v AS distance
             FROM memories b
            WHERE b.tenant_id = $1 AND b.status = 'active' AND b.valid_to IS NULL
              AND b.embedding_dim = ${dim} AND b.embedding_model = $2 AND b.id <> a.id
            ORDER BY b.embedding::vector(${dim}) <=> a.v
            LIMIT $4
         ) n
        -- A distance compare also drops NaN (a zero vector), which PostgreSQL sorts above every number.
        WHERE n.distance <= 1 - $5::float8
     ),
     pairs AS (
       SELECT DISTINCT ON (LEAST(a_id, b_id), GREATEST(a_id, b_id))
              CASE WHEN (a_at, a_id) > (b_at, b_id) THEN a_id ELSE b_id END AS newer_id,
              CASE WHEN (a_at, a_id) > (b_at, b_id) THEN b_id ELSE a_id END AS older_id,
              CASE WHEN (a_at, a_id) > (b_at, b_id) THEN a_type ELSE b_type END AS newer_type,
              CASE WHEN (a_at, a_id) > (b_at, b_id) THEN b_type ELSE a_type END AS older_type,
              similarity
         FROM near
        ORDER BY LEAST(a_id, b_id), GREATEST(a_id, b_id), similarity DESC
     )
     SELECT p.newer_id AS "newerId", p.older_id AS "olderId", p.newer_type AS "newerType", p.older_type AS "olderType",
            p.similarity
       FROM pairs p
      WHERE NOT EXISTS (
              SELECT 1 FROM memory_edges e
               WHERE e.tenant_id = $1
                 AND ((e.from_id = p.newer_id AND e.to_id = p.older_id) OR (e.from_id = p.older_id AND e.to_id = p.newer_id)))
        AND NOT EXISTS (
              SELECT 1 FROM consolidation_proposals cp
               WHERE cp.tenant_id = $1
                 AND LEAST(cp.from_id, cp.to_id) = LEAST(p.newer_id, p.older_id)
                 AND GREATEST(cp.from_id, cp.to_id) = GREATEST(p.newer_id, p.older_id))
      ORDER BY p.similarity DESC, p.newer_id, p.older_id
      LIMIT $6`,
    [scan.tenantId, scan.model, scan.scanRows, scan.neighboursPerRow, scan.minSimilarity, scan.limit],
  );
  return { pairs: rows.map((r) => ({ ...r, similarity: Number(r.similarity) })), scanned: counted[0]!.n };
}
