import type { Queryable, VectorParam } from "@3ngram/db";
import { HIT_COLUMNS, SqlParams, eligibleWhere, sqlInteger, supersededExpr, type Eligibility, type HitRow } from "./eligibility.js";

/** The query's vector, bound in pgvector's binary form (vectorParam). */
export type QueryVector = VectorParam;

/**
 * The vector leg's rows as an in-process index ranked them (in-process/vector-index.ts), nearest
 * first; `complete` when they are every vector it holds for the tenant, so the filters cannot
 * leave the leg short of rows the database's index would have found.
 */
export interface Nomination {
  ids: readonly string[];
  complete: boolean;
}

/** Where a first page's vector leg took its rows from (null: no vector leg). */
export type VectorSource = "memory" | "database" | null;

/** How the statement finds the vector leg's rows: pgvector's HNSW index, or checking the nominated ids in their order. */
type VectorLeg = { kind: "index" } | { kind: "nominated"; ids: readonly string[] };

/**
 * Which full-text vector a search reads and its query's terms come from: "english"
 * (memories.search_tsv, stems only) or "memory" (memories.lexical_tsv: stems, raw words,
 * identifiers whole and split). Both are GIN-indexed.
 */
export type Tokens = "english" | "memory";

function tsvColumn(tokens: Tokens): string {
  return tokens === "memory" ? "lexical_tsv" : "search_tsv";
}

/** One candidate as the statement answers it: what its hit is made from, and the features its rank is made from. */
export interface CandidateRow extends HitRow {
  /** Cosine similarity to the query; null when the row has no comparable vector or the vector leg did not run. */
  cosine: number | null;
  /** Whether the row matches the full-text leg's query. */
  lexical: boolean;
  ageDays: number;
  /** Whether the lower-cased topic contains the lower-cased query. */
  topicMatch: boolean;
  /** Whether a later memory supersedes or updates this one (as visible at the asOf point). */
  superseded: boolean;
  /** The row's full-text vector's length in lexemes (BM25's document length). */
  docLength: number;
  /** The query's lexemes the row holds, each with its frequency, as "lexeme tf". */
  termHits: string[];
  fromVector: boolean;
  fromFts: boolean;
  fromRecency: boolean;
}

/** Transaction-local pgvector setting: keep scanning the HNSW graph until a filtered query fills its LIMIT. */
export const HNSW_FILTERED_SCAN: Readonly<Record<string, string>> = { "hnsw.iterative_scan": "relaxed_order" };

/** At most this many distinct query terms are checked for the term-coverage evidence. */
const MAX_COUNTED_TERMS = 32;

/** The query's search terms and the tenant's text statistics, as the lexical leg and BM25 use them. */
export interface QueryTerms {
  lexemes: string[];
  stems: Set<string>;
  docs: number;
  averageLength: number;
}

/**
 * The query's distinct search terms, made by the same function as the stored vectors
 * (memory_search_vector: stems, raw words, identifiers whole and split), first MAX_COUNTED_TERMS;
 * and the tenant's text statistics (searchable memories, their mean length in lexemes). The
 * statement answers one row; a first relevance page reads it together with the retrieval scope
 * (selectScopeAndQueryTerms), everyone else through selectQueryTerms.
 */
export function queryTermsStatement(p: SqlParams, tenantId: string, query: string, tokens: Tokens): string {
  const text = p.add(query);
  return `SELECT tsvector_to_array(${tokens === "memory" ? `memory_search_vector(${text})` : `to_tsvector('english', ${text})`}) AS lexemes, tsvector_to_array(to_tsvector('english', ${text})) AS stems, s.docs, s."lexemeTotal"
       FROM (SELECT sum(docs) AS docs, sum(lexemes) AS "lexemeTotal" FROM memory_text_stats WHERE tenant_id = ${p.add(tenantId)}) s`;
}

/** The row queryTermsStatement answers. */
export interface QueryTermsRow {
  lexemes: string[];
  stems: string[];
  docs: string | null;
  lexemeTotal: string | null;
}

export function toQueryTerms(row: QueryTermsRow | undefined): QueryTerms {
  const docs = Number(row?.docs ?? 0);
  const total = Number(row?.lexemeTotal ?? 0);
  return {
    lexemes: (row?.lexemes ?? []).slice(0, MAX_COUNTED_TERMS),
    stems: new Set(row?.stems ?? []),
    docs,
    averageLength: docs > 0 ? total / docs : 0,
  };
}

export async function selectQueryTerms(db: Queryable, tenantId: string, query: string, tokens: Tokens): Promise<QueryTerms> {
  const p = new SqlParams();
  const { rows } = await db.query<QueryTermsRow>(queryTermsStatement(p, tenantId, query, tokens), p.values);
  return toQueryTerms(rows[0]);
}

/**
 * For each lexeme, how many eligible memories hold it in the `tokens` vector, counted up to `cap`
 * (enough to tell absent, present and too common apart). One statement where each term is a
 * constant one-lexeme tsquery, so the planner picks per term between a GIN probe (rare words) and
 * a scan that stops at the cap (common ones).
 */
export async function countTermMatches(db: Queryable, eligibility: Eligibility, tokens: Tokens, lexemes: readonly string[], cap: number): Promise<number[]> {
  const tsv = tsvColumn(tokens);
  const p = new SqlParams();
  const eligible = eligibleWhere(eligibility, p);
  const limit = p.add(Math.max(1, cap));
  const probes = lexemes.map(
    (lexeme, i) =>
      `(SELECT count(*) FROM (SELECT 1 FROM memories m WHERE ${eligible} AND m.${tsv} @@ ${p.add(tsqueryLiteral(lexeme))}::tsquery LIMIT ${limit}) s${i})::int AS t${i}`,
  );
  const { rows } = await db.query<Record<string, number>>(`SELECT ${probes.join(", ")}`, p.values);
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

/** What the full-text leg matches: these lexemes (any or all of them), or a query in websearch syntax. */
export type LexicalMatch = { lexemes: readonly string[]; join: "any" | "all" } | { websearch: string };

/**
 * How the full-text leg picks its rows: BM25 with every term counted once (a GIN-checked match per
 * term, no unnesting), from each term's idf and BM25's constants.
 */
export interface LexicalRank {
  terms: readonly { lexeme: string; idf: number }[];
  k1: number;
  b: number;
  averageLength: number;
}

/**
 * Gathers the candidate pool from three legs — nearest vectors (HNSW; the caller's transaction sets
 * hnsw.iterative_scan so a filtered query still fills its pool), best full-text matches (GIN) and
 * most recent — each narrowed by the same eligibility predicate, and answers the union with every
 * feature the ranking needs. What the full-text leg matches and how it orders its rows are the
 * caller's to decide, and so is scoring.
 */
export async function selectCandidates(
  db: Queryable,
  params: {
    eligibility: Eligibility;
    /** The query as given: its topic match. */
    query: string;
    tokens: Tokens;
    match: LexicalMatch;
    lexicalRank: LexicalRank;
    /** The query's lexemes whose frequencies each row reports (termHits). */
    lexemes: readonly string[];
    /** Rank at most this many matching rows in the full-text leg. */
    rankWindow: number;
    /**
     * The query's vector, or its embedding still under way: awaited last, so a model in this
     * process embeds while the term counts are read.
     */
    vector: QueryVector | null | Promise<QueryVector | null>;
    /** The vector leg's rows from an in-process index, given the query's vector; null (or absent): the database's index. */
    nominate?: ((vector: QueryVector) => Nomination | null) | undefined;
    pool: number;
  },
): Promise<{ rows: CandidateRow[]; vectorSource: VectorSource }> {
  const { eligibility, query, pool, match } = params;
  const p = new SqlParams();
  const eligible = eligibleWhere(eligibility, p);
  const tsv = tsvColumn(params.tokens);
  const tsquery =
    "websearch" in match
      ? `websearch_to_tsquery('english', ${p.add(match.websearch)})`
      : `${p.add(match.lexemes.map(tsqueryLiteral).join(match.join === "any" ? " | " : " & "))}::tsquery`;
  const lexicalOrder = (() => {
    const { k1, b, averageLength, terms } = params.lexicalRank;
    const avg = p.add(averageLength > 0 ? averageLength : 1);
    const matchedIdf =
      terms.length > 0
        ? terms.map(({ lexeme, idf }) => `CASE WHEN w.tsv @@ ${p.add(tsqueryLiteral(lexeme))}::tsquery THEN ${p.add(idf)}::float8 ELSE 0 END`).join(" + ")
        : "0";
    return `(${matchedIdf}) / (1 + ${p.add(k1)}::float8 * (1 - ${p.add(b)}::float8 + ${p.add(b)}::float8 * length(w.tsv) / ${avg}::float8))`;
  })();
  // Which query terms each candidate holds, with their frequencies ("lexeme tf"), read by
  // unnesting the candidate's vector: BM25 needs the frequencies.
  const termHits = `ARRAY(SELECT u.lexeme || ' ' || greatest(1, coalesce(cardinality(u.positions), 0))
              FROM unnest(m.${tsv}) u WHERE u.lexeme = ANY(${p.add(params.lexemes)}::text[]))`;
  // The limits are written into the text (validated integers), not bound: planned with a LIMIT it
  // cannot see, the statement cost ~1 ms more to plan inside PGlite (docs/adr/0031).
  const limit = sqlInteger(pool);
  const likePattern = p.add(escapeLike(query.trim().toLowerCase()));
  const superseded = supersededExpr(eligibility, p);
  const vector = await params.vector;
  const nomination = vector && params.nominate ? params.nominate(vector) : null;
  const statement = (leg: VectorLeg) => {
    const { vectorLeg, cosine } = vectorLegSql(p, { vector, leg, eligible, limit, tenant });
    return candidateStatement(vectorLeg, cosine);
  };
  // Each leg answers its rows' addresses (ctid) beside their ids, so the pool reads each row back
  // with one heap fetch instead of a walk down the primary key (~3 buffers less per candidate); the
  // id is checked too. The vector leg also answers the distance it ordered by, so a row it found is
  // not read from TOAST a second time for its cosine (~4 buffers per row at 512 dimensions).
  const candidateStatement = (vectorLeg: string, cosine: string) => `
    WITH q AS (SELECT ${tsquery} AS tsq),
    vec AS (${vectorLeg}),
    fts AS (
      SELECT w.id, w.tid FROM (
        SELECT m.id, m.ctid AS tid, m.${tsv} AS tsv FROM memories m, q WHERE ${eligible} AND m.${tsv} @@ q.tsq LIMIT ${sqlInteger(params.rankWindow)}
      ) w, q
      ORDER BY ${lexicalOrder} DESC, w.id LIMIT ${limit}),
    rec AS (
      SELECT m.id, m.ctid AS tid FROM memories m WHERE ${eligible} ORDER BY m.valid_from DESC, m.id LIMIT ${limit}),
    cand AS (
      SELECT id, min(tid) AS tid, min(distance) AS distance,
        bool_or(leg = 'v') AS from_vector, bool_or(leg = 'f') AS from_fts, bool_or(leg = 'r') AS from_recency
      FROM (SELECT id, tid, distance, 'v' AS leg FROM vec
            UNION ALL SELECT id, tid, NULL::float8, 'f' FROM fts
            UNION ALL SELECT id, tid, NULL::float8, 'r' FROM rec) legs
      GROUP BY id)
    SELECT ${HIT_COLUMNS()},
      ${cosine} AS cosine,
      coalesce(length(m.${tsv}), 0) AS "docLength",
      ${termHits} AS "termHits",
      (m.${tsv} @@ q.tsq) AS lexical,
      (extract(epoch FROM (now() - m.valid_from)) / 86400.0)::float8 AS "ageDays",
      (lower(m.topic) LIKE '%' || ${likePattern} || '%' ESCAPE '\\') AS "topicMatch",
      ${superseded} AS superseded,
      c.from_vector AS "fromVector", c.from_fts AS "fromFts", c.from_recency AS "fromRecency"
    FROM cand c JOIN memories m ON m.ctid = c.tid AND m.id = c.id AND m.tenant_id = ${tenant}, q`;
  const tenant = p.add(eligibility.tenantId);
  const mark = p.values.length;
  let vectorSource: VectorSource = vector === null ? null : nomination === null ? "database" : "memory";
  let { rows } = await db.query<CandidateRow>(statement(nomination === null ? { kind: "index" } : { kind: "nominated", ids: nomination.ids }), p.values);
  // The filters left fewer of the nominated rows than the leg takes, and the index held more than
  // it nominated: the database's index walks on until the leg is full (hnsw.iterative_scan).
  if (nomination !== null && !nomination.complete && countFromVector(rows) < pool) {
    p.truncate(mark);
    rows = (await db.query<CandidateRow>(statement({ kind: "index" }), p.values)).rows;
    vectorSource = "database";
  }
  return { rows, vectorSource };
}

function countFromVector(rows: readonly { fromVector: boolean }[]): number {
  let n = 0;
  for (const row of rows) if (row.fromVector) n++;
  return n;
}

/**
 * The vector leg's CTE and the cosine column. Either leg orders by the same distance and keeps
 * the first `limit` rows the filters allow: walking pgvector's HNSW index, or checking the
 * nominated ids (already in distance order) against the table.
 */
function vectorLegSql(
  p: SqlParams,
  args: { vector: QueryVector | null; leg: VectorLeg; eligible: string; limit: string; tenant: string },
): { vectorLeg: string; cosine: string } {
  const { vector, leg, eligible, limit } = args;
  if (!vector) return { vectorLeg: "SELECT NULL::uuid AS id, NULL::tid AS tid, NULL::float8 AS distance WHERE false", cosine: "NULL::float8" };
  // The dimension is a validated integer baked into the cast so the partial HNSW index applies.
  const dim = Number(vector.dimensions);
  if (!Number.isInteger(dim) || dim < 1 || dim > 2000) throw new Error("invalid vector dimension");
  const queryVector = p.add(vector.binary);
  const model = p.add(vector.model);
  const distance = `(m.embedding::vector(${dim}) <=> ${queryVector}::vector(${dim}))`;
  const ofModel = `m.embedding_dim = ${dim} AND m.embedding_model = ${model}`;
  const vectorLeg =
    leg.kind === "index"
      ? `SELECT m.id, m.ctid AS tid, ${distance} AS distance FROM memories m WHERE ${eligible} AND ${ofModel} ORDER BY ${distance} LIMIT ${limit}`
      : `SELECT m.id, m.ctid AS tid, ${distance} AS distance FROM unnest(${p.add(leg.ids)}::uuid[]) WITH ORDINALITY n(id, place)
           JOIN memories m ON m.tenant_id = ${args.tenant} AND m.id = n.id
          WHERE ${eligible} AND ${ofModel} ORDER BY n.place LIMIT ${limit}`;
  // A row the leg found carries the distance it was ordered by (the same operator on the same two
  // vectors, so the same float); only the other legs' rows compute theirs here.
  return { vectorLeg, cosine: `1 - coalesce(c.distance, CASE WHEN ${ofModel} THEN ${distance} END)` };
}
