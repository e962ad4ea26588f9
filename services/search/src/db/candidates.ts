import type { Queryable, VectorParam } from "@3ngram/db";
import { bm25Idf, bm25Score, type SearchPolicy } from "../domain/policy.js";
import type { TermCountCache } from "../in-process/term-counts.js";
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

/** One candidate with the features the ranking policy scores. */
export interface CandidateRow extends HitRow {
  cosine: number | null;
  ftsRaw: number;
  lexical: boolean;
  ageDays: number;
  topicMatch: boolean;
  superseded: boolean;
  queryTerms: { total: number; stored: number; idfTotal: number; idfStored: number };
  idfMatched: number;
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
 * (selectScopeAndQueryTerms), everyone else through queryTermsAndStats.
 */
export function queryTermsStatement(p: SqlParams, tenantId: string, query: string, tokens: SearchPolicy["tokens"]): string {
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

async function queryTermsAndStats(db: Queryable, tenantId: string, query: string, tokens: SearchPolicy["tokens"]): Promise<QueryTerms> {
  const p = new SqlParams();
  const { rows } = await db.query<QueryTermsRow>(queryTermsStatement(p, tenantId, query, tokens), p.values);
  return toQueryTerms(rows[0]);
}

/**
 * For each lexeme, how many eligible memories contain it, counted up to `cap` (enough to tell
 * absent, present and too common apart). Counts the cache knows are taken from it; the rest are
 * counted in one statement where each term is a constant one-lexeme tsquery, so the planner picks
 * per term between a GIN probe (rare words) and a scan that stops at the cap (common ones).
 */
async function termFrequencies(
  db: Queryable,
  eligibility: Eligibility,
  tsv: string,
  lexemes: readonly string[],
  cap: number,
  cache: TermCountCache | undefined,
): Promise<number[]> {
  // The two vectors count differently ("squat" is in more lexical_tsv rows): the cache keys carry the column.
  const keys = lexemes.map((lexeme) => `${tsv}:${lexeme}`);
  const counts = cache ? cache.lookup(eligibility, cap, keys) : lexemes.map(() => undefined);
  const unknown = lexemes.filter((_, i) => counts[i] === undefined);
  if (unknown.length === 0) return counts as number[];
  const p = new SqlParams();
  const eligible = eligibleWhere(eligibility, p);
  const limit = p.add(Math.max(1, cap));
  const probes = unknown.map(
    (lexeme, i) =>
      `(SELECT count(*) FROM (SELECT 1 FROM memories m WHERE ${eligible} AND m.${tsv} @@ ${p.add(tsqueryLiteral(lexeme))}::tsquery LIMIT ${limit}) s${i})::int AS t${i}`,
  );
  const { rows } = await db.query<Record<string, number>>(`SELECT ${probes.join(", ")}`, p.values);
  const counted = unknown.map((_, i) => Number(rows[0]?.[`t${i}`] ?? 0));
  cache?.remember(
    eligibility,
    cap,
    keys.filter((_, i) => counts[i] === undefined),
    counted,
  );
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
    /**
     * The query's vector, or its embedding still under way: awaited only after the term counts, so
     * a model in this process embeds while those are read (search.ts).
     */
    vector: QueryVector | null | Promise<QueryVector | null>;
    /** The vector leg's rows from an in-process index, given the query's vector; null (or absent): the database's index. */
    nominate?: ((vector: QueryVector) => Nomination | null) | undefined;
    pool: number;
    /** Recently counted words, so a common word is not counted again on every search. */
    termCounts?: TermCountCache | undefined;
    /** The query's terms and the tenant's statistics, when the caller read them already (queryTermsStatement); read here otherwise. */
    terms?: QueryTerms | undefined;
    /** BM25's constants, the lexical score and the vector searched (the rest of the policy is not read here). */
    policy: Pick<SearchPolicy, "bm25" | "tokens">;
  },
): Promise<{ candidates: CandidateRow[]; vectorSource: VectorSource }> {
  const { eligibility, query, pool } = params;
  const p = new SqlParams();
  const eligible = eligibleWhere(eligibility, p);
  const { lexemes, stems, docs, averageLength } = params.terms ?? (await queryTermsAndStats(db, eligibility.tenantId, query, params.policy.tokens));
  // The vector the leg searches (both GIN-indexed; see SearchPolicy.tokens).
  const tsv = params.policy.tokens === "memory" ? "lexical_tsv" : "search_tsv";
  // How many eligible memories hold each word (counted up to the cap): the term-coverage evidence,
  // and the document frequency that decides which words are too common to search on.
  const maxMatches = params.anyTerm?.maxMatches ?? 0;
  const frequencies = await termFrequencies(db, eligibility, tsv, lexemes, maxMatches + 1, params.termCounts);
  // Term coverage counts the english stems only (a query's words, once each): the raw and
  // identifier forms the tokeniser adds would count a word several times and a stored stem
  // with an unstored inflection as half missing.
  const stemIndexes = lexemes.flatMap((lexeme, i) => (stems.has(lexeme) ? [i] : []));
  const stored = stemIndexes.filter((i) => frequencies[i]! > 0).length;
  let tsquery: string;
  // The terms BM25 scores: the discriminating ones the leg searches on, else every term.
  let scored: string[] = lexemes;
  if (params.anyTerm && lexemes.length > 0) {
    const discriminating = lexemes.filter((_, i) => frequencies[i]! > 0 && frequencies[i]! <= maxMatches);
    if (discriminating.length > 0) scored = discriminating;
    const text = discriminating.length > 0 ? discriminating.map(tsqueryLiteral).join(" | ") : lexemes.map(tsqueryLiteral).join(" & ");
    tsquery = `${p.add(text)}::tsquery`;
  } else {
    tsquery = `websearch_to_tsquery('english', ${p.add(params.ftsQuery ?? query)})`;
  }
  const idf = new Map(lexemes.map((lexeme, i) => [lexeme, bm25Idf(frequencies[i]!, docs)]));
  // The leg picks its rows by BM25 with every term counted once (a GIN-checked match per term,
  // no unnesting); the pool is then scored with the terms' real frequencies below.
  const lexicalOrder = (() => {
    const { k1, b } = params.policy.bm25;
    const avg = p.add(averageLength > 0 ? averageLength : 1);
    const matchedIdf =
      scored.length > 0
        ? scored
            .map((lexeme) => `CASE WHEN w.tsv @@ ${p.add(tsqueryLiteral(lexeme))}::tsquery THEN ${p.add(idf.get(lexeme) ?? 0)}::float8 ELSE 0 END`)
            .join(" + ")
        : "0";
    return `(${matchedIdf}) / (1 + ${p.add(k1)}::float8 * (1 - ${p.add(b)}::float8 + ${p.add(b)}::float8 * length(w.tsv) / ${avg}::float8))`;
  })();
  // Which query terms each candidate holds, with their frequencies ("lexeme tf"), read by
  // unnesting the candidate's vector: BM25 needs the frequencies.
  const termHits = `ARRAY(SELECT u.lexeme || ' ' || greatest(1, coalesce(cardinality(u.positions), 0))
              FROM unnest(m.${tsv}) u WHERE u.lexeme = ANY(${p.add(lexemes)}::text[]))`;
  const scoredSet = new Set(scored);
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
  const candidateStatement = (vectorLeg: string, cosine: string) => `
    WITH q AS (SELECT ${tsquery} AS tsq),
    vec AS (${vectorLeg}),
    fts AS (
      SELECT w.id FROM (
        SELECT m.id, m.${tsv} AS tsv FROM memories m, q WHERE ${eligible} AND m.${tsv} @@ q.tsq LIMIT ${sqlInteger(params.rankWindow)}
      ) w, q
      ORDER BY ${lexicalOrder} DESC, w.id LIMIT ${limit}),
    rec AS (
      SELECT m.id FROM memories m WHERE ${eligible} ORDER BY m.recorded_at DESC, m.id LIMIT ${limit}),
    cand AS (
      SELECT id, bool_or(leg = 'v') AS from_vector, bool_or(leg = 'f') AS from_fts, bool_or(leg = 'r') AS from_recency
      FROM (SELECT id, 'v' AS leg FROM vec UNION ALL SELECT id, 'f' FROM fts UNION ALL SELECT id, 'r' FROM rec) legs
      GROUP BY id)
    SELECT ${HIT_COLUMNS()},
      ${cosine} AS cosine,
      coalesce(length(m.${tsv}), 0) AS "docLength",
      ${termHits} AS "termHits",
      (m.${tsv} @@ q.tsq) AS lexical,
      extract(epoch FROM (now() - m.recorded_at)) / 86400.0 AS "ageDays",
      (lower(m.topic) LIKE '%' || ${likePattern} || '%' ESCAPE '\\') AS "topicMatch",
      ${superseded} AS superseded,
      c.from_vector AS "fromVector", c.from_fts AS "fromFts", c.from_recency AS "fromRecency"
    FROM cand c JOIN memories m ON m.id = c.id AND m.tenant_id = ${tenant}, q`;
  type Row = Omit<CandidateRow, "queryTerms" | "ftsRaw"> & { docLength: number; termHits: string[] };
  const tenant = p.add(eligibility.tenantId);
  const mark = p.values.length;
  let source: VectorSource = vector === null ? null : nomination === null ? "database" : "memory";
  let { rows } = await db.query<Row>(statement(nomination === null ? { kind: "index" } : { kind: "nominated", ids: nomination.ids }), p.values);
  // The filters left fewer of the nominated rows than the leg takes, and the index held more than
  // it nominated: the database's index walks on until the leg is full (hnsw.iterative_scan).
  if (nomination !== null && !nomination.complete && countFromVector(rows) < pool) {
    p.truncate(mark);
    rows = (await db.query<Row>(statement({ kind: "index" }), p.values)).rows;
    source = "database";
  }
  const idfStored = lexemes.reduce((sum, lexeme, i) => sum + (frequencies[i]! > 0 ? idf.get(lexeme)! : 0), 0);
  const idfTotal = lexemes.reduce((sum, lexeme) => sum + idf.get(lexeme)!, 0);
  const queryTerms = { total: stemIndexes.length, stored, idfTotal, idfStored };
  // Each candidate is written out field by field: copying the row with rest and spread took V8's
  // generic property-copy path, ~1 ms per search for ~150 rows against ~0.01 ms for this.
  const candidates: CandidateRow[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    // BM25 scores the terms the leg searched on; the idf mass a row holds counts every term.
    const tf: Record<string, number> = {};
    let idfMatched = 0;
    for (const hit of r.termHits) {
      const at = hit.lastIndexOf(" ");
      const lexeme = hit.slice(0, at);
      idfMatched += idf.get(lexeme) ?? 0;
      if (scoredSet.has(lexeme)) tf[lexeme] = Number(hit.slice(at + 1));
    }
    candidates[i] = {
      id: r.id,
      memoryType: r.memoryType,
      topic: r.topic,
      contentHead: r.contentHead,
      contentLength: Number(r.contentLength),
      scope: r.scope,
      project: r.project,
      recordedText: r.recordedText,
      cosine: r.cosine === null ? null : Number(r.cosine),
      ftsRaw: r.lexical ? bm25Score(tf, idf, Number(r.docLength), averageLength, params.policy) : 0,
      lexical: r.lexical,
      ageDays: Number(r.ageDays),
      topicMatch: r.topicMatch,
      superseded: r.superseded,
      queryTerms,
      idfMatched,
      fromVector: r.fromVector,
      fromFts: r.fromFts,
      fromRecency: r.fromRecency,
    };
  }
  return { candidates, vectorSource: source };
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
  if (!vector) return { vectorLeg: "SELECT NULL::uuid AS id WHERE false", cosine: "NULL::float8" };
  // The dimension is a validated integer baked into the cast so the partial HNSW index applies.
  const dim = Number(vector.dimensions);
  if (!Number.isInteger(dim) || dim < 1 || dim > 2000) throw new Error("invalid vector dimension");
  const queryVector = p.add(vector.binary);
  const model = p.add(vector.model);
  const distance = `(m.embedding::vector(${dim}) <=> ${queryVector}::vector(${dim}))`;
  const ofModel = `m.embedding_dim = ${dim} AND m.embedding_model = ${model}`;
  const vectorLeg =
    leg.kind === "index"
      ? `SELECT m.id FROM memories m WHERE ${eligible} AND ${ofModel} ORDER BY ${distance} LIMIT ${limit}`
      : `SELECT m.id FROM unnest(${p.add(leg.ids)}::uuid[]) WITH ORDINALITY n(id, place)
           JOIN memories m ON m.tenant_id = ${args.tenant} AND m.id = n.id
          WHERE ${eligible} AND ${ofModel} ORDER BY n.place LIMIT ${limit}`;
  return { vectorLeg, cosine: `CASE WHEN ${ofModel} THEN 1 - ${distance} END` };
}
