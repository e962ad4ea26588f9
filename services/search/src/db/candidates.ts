import type { Queryable } from "@3ngram/db";
import { HIT_COLUMNS, SqlParams, eligibleWhere, supersededExpr, type Eligibility, type HitRow } from "./eligibility.js";

export interface QueryVector {
  literal: string;
  model: string;
  dimensions: number;
}

/** One candidate with the features the ranking policy scores. */
export interface CandidateRow extends HitRow {
  cosine: number | null;
  ftsRaw: number;
  lexical: boolean;
  ageDays: number;
  topicMatch: boolean;
  superseded: boolean;
  queryTerms: { total: number; stored: number };
  fromVector: boolean;
  fromFts: boolean;
  fromRecency: boolean;
}

/** At most this many distinct query terms are checked for the term-coverage evidence. */
const MAX_COUNTED_TERMS = 32;

/** The query's distinct full-text lexemes (english configuration, like the index), first MAX_COUNTED_TERMS. */
async function queryLexemes(db: Queryable, query: string): Promise<string[]> {
  const { rows } = await db.query<{ lexemes: string[] }>("SELECT tsvector_to_array(to_tsvector('english', $1)) AS lexemes", [query]);
  return (rows[0]?.lexemes ?? []).slice(0, MAX_COUNTED_TERMS);
}

/**
 * For each lexeme, how many eligible memories contain it, counted up to `cap` (enough to tell
 * absent, present and too common apart). Each term is a constant one-lexeme tsquery, so the
 * planner picks a GIN probe per term and the count stops at the cap.
 */
async function termFrequencies(db: Queryable, eligibility: Eligibility, lexemes: readonly string[], cap: number): Promise<number[]> {
  if (lexemes.length === 0) return [];
  const p = new SqlParams();
  const eligible = eligibleWhere(eligibility, p);
  const limit = p.add(Math.max(1, cap));
  const counts = lexemes.map(
    (lexeme, i) =>
      `(SELECT count(*) FROM (SELECT 1 FROM memories m WHERE ${eligible} AND m.search_tsv @@ ${p.add(tsqueryLiteral(lexeme))}::tsquery LIMIT ${limit}) s${i})::int AS t${i}`,
  );
  const { rows } = await db.query<Record<string, number>>(`SELECT ${counts.join(", ")}`, p.values);
  return lexemes.map((_, i) => Number(rows[0]?.[`t${i}`] ?? 0));
}

/** One lexeme as tsquery input: quoted, with quotes and backslashes doubled. */
function tsqueryLiteral(lexeme: string): string {
  return `'${lexeme.replace(/\\/g, "\\\\").replace(/'/g, "''")}'`;
}

/** Escapes LIKE wildcards so a query of "50%" matches a literal percent sign. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** How the full-text leg matches: the tsquery text (websearch syntax or a literal tsquery) and the term-coverage counts. */
export interface LexicalPlan {
  /** Literal tsquery text, or null to parse `websearch` with websearch_to_tsquery. */
  tsquery: string | null;
  websearch: string;
  terms: { total: number; stored: number };
}

/**
 * Decides how the full-text leg matches. Counts, up to the cap, how many eligible memories hold
 * each of the query's words: the term-coverage evidence, and the document frequency that decides
 * which words are too common to search on. With anyTerm the leg matches any discriminating word
 * (if every word is too common, all of them); otherwise websearch_to_tsquery(ftsQuery).
 */
export async function planLexical(
  db: Queryable,
  params: { eligibility: Eligibility; query: string; ftsQuery?: string; anyTerm?: { maxMatches: number } | undefined },
): Promise<LexicalPlan> {
  const lexemes = await queryLexemes(db, params.query);
  const maxMatches = params.anyTerm?.maxMatches ?? 0;
  const frequencies = await termFrequencies(db, params.eligibility, lexemes, maxMatches + 1);
  const terms = { total: lexemes.length, stored: frequencies.filter((n) => n > 0).length };
  const websearch = params.ftsQuery ?? params.query;
  if (!params.anyTerm || lexemes.length === 0) return { tsquery: null, websearch, terms };
  const discriminating = lexemes.filter((_, i) => frequencies[i]! > 0 && frequencies[i]! <= maxMatches);
  const tsquery = discriminating.length > 0 ? discriminating.map(tsqueryLiteral).join(" | ") : lexemes.map(tsqueryLiteral).join(" & ");
  return { tsquery, websearch, terms };
}

/** The cast that lets the partial HNSW index for this dimension apply; the dimension is validated, then baked in. */
function vectorCast(vector: QueryVector): string {
  const dim = Number(vector.dimensions);
  if (!Number.isInteger(dim) || dim < 1 || dim > 2000) throw new Error("invalid vector dimension");
  return `vector(${dim})`;
}

/**
 * The vector leg: ids of the `pool` eligible memories nearest the query vector (HNSW; the caller's
 * transaction sets hnsw.iterative_scan so a filtered query still fills its pool). Runs apart from
 * the other legs so it can overlap the lexical planning on a second connection.
 */
export async function selectNearest(db: Queryable, params: { eligibility: Eligibility; vector: QueryVector; pool: number }): Promise<string[]> {
  const { vector } = params;
  const cast = vectorCast(vector);
  const p = new SqlParams();
  const eligible = eligibleWhere(params.eligibility, p);
  const sql = `SELECT m.id FROM memories m
    WHERE ${eligible} AND m.embedding_dim = ${Number(vector.dimensions)} AND m.embedding_model = ${p.add(vector.model)}
    ORDER BY m.embedding::${cast} <=> ${p.add(vector.literal)}::${cast} LIMIT ${p.add(params.pool)}`;
  const { rows } = await db.query<{ id: string }>(sql, p.values);
  return rows.map((r) => r.id);
}

/** The transaction-local settings the vector leg needs (pgvector: keep scanning until a filtered pool is full). */
export const NEAREST_SETTINGS = { "hnsw.iterative_scan": "relaxed_order" } as const;

/**
 * Assembles the candidate pool: the nearest ids found by the vector leg, the best full-text
 * matches (GIN; ranked within a bounded window) and the most recent rows, each narrowed by the same
 * eligibility predicate, with every feature the ranking policy needs. Ranking happens in the
 * policy, not here.
 */
export async function selectCandidates(
  db: Queryable,
  params: {
    eligibility: Eligibility;
    query: string;
    lexical: LexicalPlan;
    /** Rank at most this many matching rows in the full-text leg. */
    rankWindow: number;
    /** The query vector (for every candidate's cosine) and the vector leg's ids; null when the query could not be embedded. */
    vector: { query: QueryVector; nearestIds: readonly string[] } | null;
    pool: number;
  },
): Promise<CandidateRow[]> {
  const { eligibility, query, vector, pool, lexical } = params;
  const p = new SqlParams();
  const eligible = eligibleWhere(eligibility, p);
  const tsquery = lexical.tsquery !== null ? `${p.add(lexical.tsquery)}::tsquery` : `websearch_to_tsquery('english', ${p.add(lexical.websearch)})`;
  const limit = p.add(pool);
  const likePattern = p.add(escapeLike(query.trim().toLowerCase()));
  const superseded = supersededExpr(eligibility, p);
  let vectorLeg = "SELECT NULL::uuid AS id WHERE false";
  let cosine = "NULL::float8";
  if (vector) {
    const cast = vectorCast(vector.query);
    vectorLeg = `SELECT unnest(${p.add(vector.nearestIds)}::uuid[]) AS id`;
    cosine = `CASE WHEN m.embedding_dim = ${Number(vector.query.dimensions)} AND m.embedding_model = ${p.add(vector.query.model)}
      THEN 1 - (m.embedding::${cast} <=> ${p.add(vector.query.literal)}::${cast}) END`;
  }
  const sql = `
    WITH q AS (SELECT ${tsquery} AS tsq),
    vec AS (${vectorLeg}),
    fts AS (
      SELECT w.id FROM (
        SELECT m.id, m.search_tsv FROM memories m, q WHERE ${eligible} AND m.search_tsv @@ q.tsq LIMIT ${p.add(params.rankWindow)}
      ) w, q
      ORDER BY ts_rank(w.search_tsv, q.tsq) DESC, w.id LIMIT ${limit}),
    rec AS (
      SELECT m.id FROM memories m WHERE ${eligible} ORDER BY m.recorded_at DESC, m.id LIMIT ${limit}),
    cand AS (
      SELECT id, bool_or(leg = 'v') AS from_vector, bool_or(leg = 'f') AS from_fts, bool_or(leg = 'r') AS from_recency
      FROM (SELECT id, 'v' AS leg FROM vec UNION ALL SELECT id, 'f' FROM fts UNION ALL SELECT id, 'r' FROM rec) legs
      GROUP BY id)
    SELECT ${HIT_COLUMNS()},
      ${cosine} AS cosine,
      ts_rank(m.search_tsv, q.tsq) AS "ftsRaw",
      (m.search_tsv @@ q.tsq) AS lexical,
      extract(epoch FROM (now() - m.recorded_at)) / 86400.0 AS "ageDays",
      (lower(m.topic) LIKE '%' || ${likePattern} || '%' ESCAPE '\\') AS "topicMatch",
      ${superseded} AS superseded,
      c.from_vector AS "fromVector", c.from_fts AS "fromFts", c.from_recency AS "fromRecency"
    FROM cand c JOIN memories m ON m.id = c.id AND m.tenant_id = ${p.add(eligibility.tenantId)}, q
    -- A row the vector leg saw may have become ineligible since (it ran in its own transaction).
    WHERE ${eligible}`;
  const { rows } = await db.query<Omit<CandidateRow, "queryTerms">>(sql, p.values);
  return rows.map((r) => ({
    ...r,
    queryTerms: lexical.terms,
    cosine: r.cosine === null ? null : Number(r.cosine),
    ftsRaw: Number(r.ftsRaw),
    ageDays: Number(r.ageDays),
    contentLength: Number(r.contentLength),
  }));
}
