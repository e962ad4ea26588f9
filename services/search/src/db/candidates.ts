import type { Queryable } from "@3ngram/db";
import type { TermCountCache } from "../domain/term-counts.js";
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

/** Transaction-local pgvector setting: keep scanning the HNSW graph until a filtered query fills its LIMIT. */
export const HNSW_FILTERED_SCAN: Readonly<Record<string, string>> = { "hnsw.iterative_scan": "relaxed_order" };

/** At most this many distinct query terms are checked for the term-coverage evidence. */
const MAX_COUNTED_TERMS = 32;

/** The query's distinct full-text lexemes (english configuration, like the index), first MAX_COUNTED_TERMS. */
async function queryLexemes(db: Queryable, query: string): Promise<string[]> {
  const { rows } = await db.query<{ lexemes: string[] }>("SELECT tsvector_to_array(to_tsvector('english', $1)) AS lexemes", [query]);
  return (rows[0]?.lexemes ?? []).slice(0, MAX_COUNTED_TERMS);
}

/**
 * For each lexeme, how many eligible memories contain it, counted up to `cap` (enough to tell
 * absent, present and too common apart). Counts the cache knows are taken from it; the rest are
 * counted in one statement where each term is a constant one-lexeme tsquery, so the planner picks
 * per term between a GIN probe (rare words) and a scan that stops at the cap (common ones).
 */
async function termFrequencies(db: Queryable, eligibility: Eligibility, lexemes: readonly string[], cap: number, cache: TermCountCache | undefined): Promise<number[]> {
  const counts = cache ? cache.lookup(eligibility, cap, lexemes) : lexemes.map(() => undefined);
  const unknown = lexemes.filter((_, i) => counts[i] === undefined);
  if (unknown.length === 0) return counts as number[];
  const p = new SqlParams();
  const eligible = eligibleWhere(eligibility, p);
  const limit = p.add(Math.max(1, cap));
  const probes = unknown.map(
    (lexeme, i) =>
      `(SELECT count(*) FROM (SELECT 1 FROM memories m WHERE ${eligible} AND m.search_tsv @@ ${p.add(tsqueryLiteral(lexeme))}::tsquery LIMIT ${limit}) s${i})::int AS t${i}`,
  );
  const { rows } = await db.query<Record<string, number>>(`SELECT ${probes.join(", ")}`, p.values);
  const counted = unknown.map((_, i) => Number(rows[0]?.[`t${i}`] ?? 0));
  cache?.remember(eligibility, cap, unknown, counted);
  let next = 0;
  return counts.map((known) => known ?? counted[next++]!);
}

/** One lexeme as tsquery input: quoted, with quotes and backslashes doubled. */
function tsqueryLiteral(lexeme: string): string {
  return `'${lexeme.replace(/\\/g, "\\\\").replace(/'/g, "''")}'`;
}

/** Escapes LIKE wildcards so a query of "50%" matches a literal percent sign. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * Gathers the candidate pool from three legs — nearest vectors (HNSW; the caller's transaction sets
 * hnsw.iterative_scan so a filtered query still fills its pool), best full-text matches (GIN) and
 * most recent — each narrowed by the same eligibility predicate, and returns the union with every
 * feature the ranking policy needs. Ranking itself happens in the policy, not here.
 */
export async function selectCandidates(
  db: Queryable,
  params: {
    eligibility: Eligibility;
    query: string;
    /** The text websearch_to_tsquery parses for the full-text leg (the policy's lexical form); the query when absent. */
    ftsQuery?: string;
    /**
     * Match any of the query's words, leaving out words found in more than maxMatches eligible
     * memories (if all are that common, require all of them). Absent: websearch_to_tsquery(ftsQuery).
     */
    anyTerm?: { maxMatches: number } | undefined;
    /** Rank at most this many matching rows in the full-text leg. */
    rankWindow: number;
    vector: QueryVector | null;
    pool: number;
    /** Recently counted words, so a common word is not counted again on every search. */
    termCounts?: TermCountCache | undefined;
  },
): Promise<CandidateRow[]> {
  const { eligibility, query, vector, pool } = params;
  const p = new SqlParams();
  const eligible = eligibleWhere(eligibility, p);
  const lexemes = await queryLexemes(db, query);
  // How many eligible memories hold each word (counted up to the cap): the term-coverage evidence,
  // and the document frequency that decides which words are too common to search on.
  const maxMatches = params.anyTerm?.maxMatches ?? 0;
  const frequencies = await termFrequencies(db, eligibility, lexemes, maxMatches + 1, params.termCounts);
  const stored = frequencies.filter((n) => n > 0).length;
  let tsquery: string;
  if (params.anyTerm && lexemes.length > 0) {
    const discriminating = lexemes.filter((_, i) => frequencies[i]! > 0 && frequencies[i]! <= maxMatches);
    const text = discriminating.length > 0 ? discriminating.map(tsqueryLiteral).join(" | ") : lexemes.map(tsqueryLiteral).join(" & ");
    tsquery = `${p.add(text)}::tsquery`;
  } else {
    tsquery = `websearch_to_tsquery('english', ${p.add(params.ftsQuery ?? query)})`;
  }
  const limit = p.add(pool);
  const likePattern = p.add(escapeLike(query.trim().toLowerCase()));
  const superseded = supersededExpr(eligibility, p);
  let vectorLeg = "SELECT NULL::uuid AS id WHERE false";
  let cosine = "NULL::float8";
  if (vector) {
    // The dimension is a validated integer baked into the cast so the partial HNSW index applies.
    const dim = Number(vector.dimensions);
    if (!Number.isInteger(dim) || dim < 1 || dim > 2000) throw new Error("invalid vector dimension");
    const literal = p.add(vector.literal);
    const model = p.add(vector.model);
    const distance = `(m.embedding::vector(${dim}) <=> ${literal}::vector(${dim}))`;
    vectorLeg = `SELECT m.id FROM memories m
      WHERE ${eligible} AND m.embedding_dim = ${dim} AND m.embedding_model = ${model}
      ORDER BY ${distance} LIMIT ${limit}`;
    cosine = `CASE WHEN m.embedding_dim = ${dim} AND m.embedding_model = ${model} THEN 1 - ${distance} END`;
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
    FROM cand c JOIN memories m ON m.id = c.id AND m.tenant_id = ${p.add(eligibility.tenantId)}, q`;
  const { rows } = await db.query<Omit<CandidateRow, "queryTerms">>(sql, p.values);
  const queryTerms = { total: lexemes.length, stored };
  return rows.map((r) => ({
    ...r,
    queryTerms,
    cosine: r.cosine === null ? null : Number(r.cosine),
    ftsRaw: Number(r.ftsRaw),
    ageDays: Number(r.ageDays),
    contentLength: Number(r.contentLength),
  }));
}
