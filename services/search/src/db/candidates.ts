import type { Queryable } from "@3ngram/db";
import type { MemoryType, MemoryStatus } from "@3ngram/schema";

export interface CandidateFilters {
  memoryTypes: readonly MemoryType[];
  scope: string | null;
  projects: readonly string[];
  status: MemoryStatus;
}

export interface QueryVector {
  literal: string;
  model: string;
  dimensions: number;
}

export interface CandidateRow {
  id: string;
  memoryType: MemoryType;
  topic: string;
  /** The head of the content, enough to cut an excerpt from. */
  contentHead: string;
  contentLength: number;
  scope: string;
  project: string | null;
  recordedAt: Date;
  cosine: number | null;
  ftsRaw: number;
  lexical: boolean;
  ageDays: number;
  topicMatch: boolean;
  fromVector: boolean;
  fromFts: boolean;
  fromRecency: boolean;
}

/** Enough characters of content to cut a 600-character excerpt and know whether it was cut. */
const CONTENT_HEAD_CHARS = 700;

/** Escapes LIKE wildcards so a query of "50%" matches a literal percent sign. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * Gathers the candidate pool from three legs — nearest vectors (HNSW), best full-text matches
 * (GIN) and most recent — each narrowed by the same eligibility predicate, and returns each
 * candidate with the features the fusion policy scores. Ranking itself happens in the policy.
 */
export async function selectCandidates(
  db: Queryable,
  params: { tenantId: string; query: string; vector: QueryVector | null; filters: CandidateFilters; pool: number },
): Promise<CandidateRow[]> {
  const { tenantId, query, vector, filters, pool } = params;
  // $1 tenant, $2 types, $3 scope, $4 projects, $5 status: the one eligibility predicate for every leg.
  // A scope filter naming a registered scope or one of its aliases matches memories stored under the
  // name or any alias (rows written before an alias or a rename existed); an unregistered scope
  // matches itself. The registry lookup is uncorrelated, so PostgreSQL evaluates it once per leg.
  const eligible = `m.tenant_id = $1
    AND m.status = $5
    AND (cardinality($2::text[]) = 0 OR m.memory_type = ANY($2::text[]))
    AND ($3::text IS NULL OR m.scope = $3 OR m.scope = ANY((
      SELECT array_prepend(s.name, s.aliases) FROM scopes s
      WHERE s.tenant_id = $1 AND ($3::text = s.name OR $3::text = ANY(s.aliases))
      ORDER BY ($3::text = s.name) DESC LIMIT 1)::text[]))
    AND (cardinality($4::text[]) = 0 OR m.project = ANY($4::text[]))`;
  const values: unknown[] = [tenantId, filters.memoryTypes, filters.scope, filters.projects, filters.status, query, pool, escapeLike(query.trim().toLowerCase())];
  let vectorLeg = "SELECT NULL::uuid AS id WHERE false";
  let cosine = "NULL::float8";
  if (vector) {
    // The dimension is a validated integer baked into the cast so the partial HNSW index applies.
    const dim = Number(vector.dimensions);
    if (!Number.isInteger(dim) || dim < 1 || dim > 2000) throw new Error("invalid vector dimension");
    values.push(vector.literal, vector.model);
    const distance = `(m.embedding::vector(${dim}) <=> $9::vector(${dim}))`;
    vectorLeg = `SELECT m.id FROM memories m
      WHERE ${eligible} AND m.embedding_dim = ${dim} AND m.embedding_model = $10
      ORDER BY ${distance} LIMIT $7`;
    cosine = `CASE WHEN m.embedding_dim = ${dim} AND m.embedding_model = $10 THEN 1 - ${distance} END`;
  }
  if (vector) await db.query("SET LOCAL hnsw.iterative_scan = relaxed_order");
  const sql = `
    WITH q AS (SELECT websearch_to_tsquery('english', $6) AS tsq),
    vec AS (${vectorLeg}),
    fts AS (
      SELECT m.id FROM memories m, q
      WHERE ${eligible} AND m.search_tsv @@ q.tsq
      ORDER BY ts_rank(m.search_tsv, q.tsq) DESC, m.id LIMIT $7),
    rec AS (
      SELECT m.id FROM memories m WHERE ${eligible} ORDER BY m.recorded_at DESC, m.id LIMIT $7),
    cand AS (
      SELECT id, bool_or(leg = 'v') AS from_vector, bool_or(leg = 'f') AS from_fts, bool_or(leg = 'r') AS from_recency
      FROM (SELECT id, 'v' AS leg FROM vec UNION ALL SELECT id, 'f' FROM fts UNION ALL SELECT id, 'r' FROM rec) legs
      GROUP BY id)
    SELECT m.id, m.memory_type AS "memoryType", m.topic, left(m.content, ${CONTENT_HEAD_CHARS}) AS "contentHead",
      char_length(m.content) AS "contentLength", m.scope, m.project, m.recorded_at AS "recordedAt",
      ${cosine} AS cosine,
      ts_rank(m.search_tsv, q.tsq) AS "ftsRaw",
      (m.search_tsv @@ q.tsq) AS lexical,
      extract(epoch FROM (now() - m.recorded_at)) / 86400.0 AS "ageDays",
      (lower(m.topic) LIKE '%' || $8 || '%' ESCAPE '\\') AS "topicMatch",
      c.from_vector AS "fromVector", c.from_fts AS "fromFts", c.from_recency AS "fromRecency"
    FROM cand c JOIN memories m ON m.id = c.id AND m.tenant_id = $1, q`;
  const { rows } = await db.query<CandidateRow>(sql, values);
  return rows.map((r) => ({
    ...r,
    cosine: r.cosine === null ? null : Number(r.cosine),
    ftsRaw: Number(r.ftsRaw),
    ageDays: Number(r.ageDays),
    contentLength: Number(r.contentLength),
  }));
}
