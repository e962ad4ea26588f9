import { AppError } from "@3ngram/errors";
import { parseTimestamptz, withPreparedStatements, withTenant, type Pool, type Queryable } from "@3ngram/db";
import type { Logger } from "@3ngram/runtime";
import {
  MAX_FROZEN_CURSOR_IDS,
  excerpt,
  type MemoryStatus,
  type MemoryType,
  type SearchInput,
  type SearchLeg,
  type SearchOrder,
  type SearchProjection,
} from "@3ngram/schema";
import { HNSW_FILTERED_SCAN, selectCandidates, type QueryTerms } from "../db/candidates.js";
import { CATCH_UP_SNAPSHOT_SETTING } from "../db/stored-vectors.js";
import type { Eligibility, HitRow } from "../db/eligibility.js";
import { selectChronological, selectEligibleByIds } from "../db/pages.js";
import { selectRetrievalScope, selectScopeAndQueryTerms, selectScopeNames } from "../db/retrieval-scope.js";
import { decodeCursor, encodeCursor, fingerprint, foreignCursor, type Cursor, type FrozenCursor, type KeysetCursor, type PageSnapshot } from "./cursor.js";
import {
  type AbstentionEvidence,
  abstentionEvidence,
  candidatePoolSize,
  lexicalQueryText,
  matchesAnyTerm,
  rank,
  SEARCH_POLICY,
  type SearchPolicy,
  shouldAbstain,
} from "./policy.js";
import { normaliseQuery, type QueryEmbedder } from "../in-process/query-embedder.js";
import type { TermCountCache } from "../in-process/term-counts.js";
import type { Nominate, VectorIndex } from "../in-process/vector-index.js";

export interface SearchDeps {
  pool: Pool;
  /** Read-only database role. */
  role: string;
  queryEmbedder: QueryEmbedder;
  /** Ranking numbers; SEARCH_POLICY unless a calibration run supplies candidates. */
  policy?: SearchPolicy;
  /** Recently counted query words (see TermCountCache); absent: every word is counted each time. */
  termCounts?: TermCountCache;
  /** The tenants' vectors in this process for an exact vector leg (SEARCH_VECTOR_INDEX=memory); absent: the database's HNSW index. */
  vectorIndex?: VectorIndex;
  log: Logger;
}

interface RankedHit {
  id: string;
  memoryType: MemoryType;
  topic: string;
  excerpt: string;
  contentLength: number;
  truncated: boolean;
  score: number;
  scope: string;
  project: string | null;
  recordedAt: Date;
}

interface SearchCoverage {
  order: SearchOrder;
  legs: { leg: SearchLeg; available: boolean; candidates: number }[];
  filters: {
    memoryTypes: MemoryType[];
    scope: string | null;
    projects: string[];
    status: MemoryStatus | null;
    recordedAfter: Date | null;
    recordedBefore: Date | null;
  };
  appliedScope: string | null;
  asOf: { validAt: Date | null; asKnownAt: Date | null } | null;
  poolSize: number | null;
  hasMore: boolean;
  abstained: boolean;
  evidence: AbstentionEvidence;
}

export interface SearchResult {
  hits: RankedHit[];
  projection: SearchProjection;
  hasMore: boolean;
  nextCursor: string | null;
  coverage: SearchCoverage;
}

/** Where a page ends: its hits, whether more follow, the cursor to them, and how the pool was searched. */
interface Page {
  hits: { row: HitRow; score: number }[];
  hasMore: boolean;
  cursor: Cursor | null;
  poolSize: number | null;
  snapshot: PageSnapshot;
}

/** Scores are reported (and frozen into cursors) at this precision. */
const SCORE_DECIMALS = 6;
/** At most this many registered scope names are listed when a scope is required. */
const LISTED_SCOPES = 8;

/**
 * One search within one tenant.
 * - relevance order, first page: embed the query (cached; the vector leg is reported unavailable
 *   when that fails), gather candidates from every leg under one eligibility predicate, rank them
 *   with the policy, return the first page and freeze the ranked pool into the cursor.
 * - relevance order, later pages: re-read the frozen ids by position under the same predicate
 *   (rows that became ineligible are skipped), with their frozen scores; no embedding, no ranking.
 * - chronological order: every eligible row (matching the query as full text, when one is given),
 *   newest recorded first, continued by a keyset cursor; no embedding.
 * The tenant's retrieval default applies to unscoped searches, and every cursor is bound to the
 * query, filters and applied scope it was issued for.
 */
export async function search(deps: SearchDeps, tenantId: string, input: SearchInput): Promise<SearchResult> {
  const policy = deps.policy ?? SEARCH_POLICY;
  // A garbled cursor is refused before any work.
  const cursor = input.cursor !== undefined ? decodeCursor(input.cursor) : null;
  const query = input.query !== undefined ? normaliseQuery(input.query) : null;
  const asOf = input.asOf ? { validAt: dateOrNull(input.asOf.validAt), asKnownAt: dateOrNull(input.asOf.asKnownAt) } : null;
  const memoryTypes: MemoryType[] = input.memoryTypes ? [...new Set(input.memoryTypes)] : input.memoryType ? [input.memoryType] : [];
  const projects = input.projects ? [...new Set(input.projects)] : input.project !== undefined ? [input.project] : [];
  // Archived rows only on request; a point in time lifts the active-only default.
  const status: MemoryStatus | null = input.status ?? (asOf ? null : "active");
  const recordedAfter = dateOrNull(input.recordedAfter);
  const recordedBefore = dateOrNull(input.recordedBefore);

  // Only a first relevance page runs the vector leg, and only it needs the query embedded.
  const firstRanked = input.order === "relevance" && cursor === null;
  // A model in this process embeds while the transaction opens and the scope, the query's terms and
  // their counts are read (selectCandidates awaits it last). A remote one is awaited before a
  // connection is taken, so none waits on the network. embed() answers null on failure, never throws.
  const embedding = firstRanked && query !== null ? deps.queryEmbedder.embed(query) : Promise.resolve(null);
  if (!deps.queryEmbedder.inProcess) await embedding;
  // With the in-process vector index holding the tenant, the first statement also reads what
  // changed since the index's snapshot, which the opening batch sets (CATCH_UP_SNAPSHOT_SETTING).
  const vectorSet = firstRanked && deps.vectorIndex ? deps.queryEmbedder.vectorSet : null;
  const catchUp = vectorSet ? deps.vectorIndex!.catchUp({ tenantId, ...vectorSet }) : null;
  const settings = firstRanked ? { ...HNSW_FILTERED_SCAN, ...(catchUp ? { [CATCH_UP_SNAPSHOT_SETTING]: catchUp.since } : {}) } : {};
  return withTenant(deps.pool, { role: deps.role, tenantId, readOnly: true, settings }, async (client) => {
    const db = withPreparedStatements(client);
    // A first relevance page reads the query's terms in the scope's statement (one round trip less).
    const { scope, terms, changed } = firstRanked
      ? await selectScopeAndQueryTerms(db, {
          tenantId,
          requested: input.scope ?? null,
          query: query!,
          tokens: policy.tokens,
          changedSince: catchUp !== null,
        })
      : { scope: await selectRetrievalScope(db, tenantId, input.scope ?? null), terms: undefined, changed: null };
    if (scope.scope === null && scope.mode === "require") throw await scopeRequired(db, tenantId);
    const nominate = catchUp && changed ? await catchUp.finish(db, changed) : null;
    const appliedScope = input.scope === undefined ? scope.scope : null;
    const eligibility: Eligibility = { tenantId, memoryTypes, scopeNames: scope.names, projects, status, recordedAfter, recordedBefore, asOf };
    const fp = fingerprint({
      tenantId,
      order: input.order,
      query,
      memoryTypes,
      scope: input.scope ?? null,
      appliedScope,
      projects,
      status,
      recordedAfter,
      recordedBefore,
      asOf,
    });
    if (cursor !== null && cursor.fingerprint !== fp) throw foreignCursor();

    let page: Page;
    if (input.order === "chronological") {
      if (cursor !== null && cursor.kind !== "keyset") throw foreignCursor();
      page = await chronologicalPage(db, { eligibility, query, limit: input.limit, cursor, fp });
    } else if (cursor !== null) {
      if (cursor.kind !== "frozen") throw foreignCursor();
      page = await frozenPage(db, { eligibility, limit: input.limit, cursor });
    } else {
      page = await rankedPage(db, {
        eligibility,
        query: query!,
        vector: embedding,
        nominate,
        vectorIndex: deps.vectorIndex,
        model: deps.queryEmbedder.vectorSet?.model ?? null,
        limit: input.limit,
        fp,
        policy,
        termCounts: deps.termCounts,
        terms,
      });
    }

    deps.log.debug(
      { order: input.order, hits: page.hits.length, hasMore: page.hasMore, continued: cursor !== null, poolSize: page.poolSize },
      "search answered",
    );
    return {
      hits: page.hits.map(({ row, score }) => toHit(row, score, input.projection)),
      projection: input.projection,
      hasMore: page.hasMore,
      nextCursor: page.cursor ? encodeCursor(page.cursor) : null,
      coverage: {
        order: input.order,
        legs: page.snapshot.legs,
        filters: { memoryTypes, scope: scope.scope, projects, status, recordedAfter, recordedBefore },
        appliedScope,
        asOf,
        poolSize: page.poolSize,
        hasMore: page.hasMore,
        abstained: page.snapshot.abstained,
        evidence: page.snapshot.evidence,
      },
    };
  });
}

/** First relevance page: gather, rank, freeze. */
async function rankedPage(
  db: Queryable,
  args: {
    eligibility: Eligibility;
    query: string;
    /** Null without a model or when the query could not be embedded: the leg is then reported unavailable. */
    vector: ReturnType<QueryEmbedder["embed"]>;
    /** The in-process index's nominations for the vector leg (VectorIndex.current); null: the database's index. */
    nominate: Nominate | null;
    vectorIndex: VectorIndex | undefined;
    /** The model queries are embedded with (null without one): the abstention verdict is calibrated per model. */
    model: string | null;
    limit: number;
    fp: string;
    policy: SearchPolicy;
    termCounts: TermCountCache | undefined;
    terms: QueryTerms | undefined;
  },
): Promise<Page> {
  const pool = candidatePoolSize(args.limit, args.policy);
  const { nominate } = args;
  const { candidates, vectorSource } = await selectCandidates(db, {
    eligibility: args.eligibility,
    query: args.query,
    ftsQuery: lexicalQueryText(args.query, args.policy),
    anyTerm: matchesAnyTerm(args.query, args.policy) ? { maxMatches: args.policy.lexicalTermMaxMatches } : undefined,
    rankWindow: args.policy.lexicalRankWindow,
    vector: args.vector,
    nominate: nominate ? (vector) => nominate(vector, pool) : undefined,
    pool,
    termCounts: args.termCounts,
    terms: args.terms,
    policy: args.policy,
  });
  args.vectorIndex?.recordLeg(vectorSource);
  const ranked = rank(candidates, args.query, args.policy).slice(0, MAX_FROZEN_CURSOR_IDS);
  const evidence = abstentionEvidence(ranked);
  const snapshot: PageSnapshot = {
    legs: [
      { leg: "vector", available: (await args.vector) !== null, candidates: candidates.filter((c) => c.fromVector).length },
      { leg: "fts", available: true, candidates: candidates.filter((c) => c.fromFts).length },
      { leg: "recency", available: true, candidates: candidates.filter((c) => c.fromRecency).length },
    ],
    abstained: shouldAbstain(evidence, ranked.length, args.model, args.policy),
    evidence: {
      bestCosine: roundOrNull(evidence.bestCosine),
      anyLexical: evidence.anyLexical,
      scoreGap: roundOrNull(evidence.scoreGap),
      termCoverage: roundOrNull(evidence.termCoverage ?? null),
    },
  };
  const scores = ranked.map((r) => round(r.score));
  const hasMore = ranked.length > args.limit;
  return {
    hits: ranked.slice(0, args.limit).map((r, i) => ({ row: r.candidate, score: scores[i]! })),
    hasMore,
    cursor: hasMore ? { kind: "frozen", fingerprint: args.fp, offset: args.limit, ids: ranked.map((r) => r.candidate.id), scores, snapshot } : null,
    poolSize: ranked.length,
    snapshot,
  };
}

/** A later relevance page: the frozen ids from the cursor's position, skipping rows no longer eligible. */
async function frozenPage(db: Queryable, args: { eligibility: Eligibility; limit: number; cursor: FrozenCursor }): Promise<Page> {
  const { cursor, limit } = args;
  const rows = await selectEligibleByIds(db, args.eligibility, cursor.ids.slice(cursor.offset));
  const byId = new Map(rows.map((r) => [r.id, r]));
  const hits: Page["hits"] = [];
  let next = cursor.offset;
  while (next < cursor.ids.length && hits.length < limit) {
    const row = byId.get(cursor.ids[next]!);
    if (row) hits.push({ row, score: cursor.scores[next]! });
    next += 1;
  }
  const hasMore = cursor.ids.slice(next).some((id) => byId.has(id));
  return {
    hits,
    hasMore,
    cursor: hasMore ? { ...cursor, offset: next } : null,
    poolSize: cursor.ids.length,
    snapshot: cursor.snapshot,
  };
}

/** A page of the exhaustive listing, newest first, continued strictly after the cursor's row. */
async function chronologicalPage(
  db: Queryable,
  args: { eligibility: Eligibility; query: string | null; limit: number; cursor: KeysetCursor | null; fp: string },
): Promise<Page> {
  const rows = await selectChronological(db, { eligibility: args.eligibility, query: args.query, after: args.cursor?.after ?? null, limit: args.limit });
  const hits = rows.slice(0, args.limit);
  const hasMore = rows.length > args.limit;
  const last = hits[hits.length - 1];
  return {
    hits: hits.map((row) => ({ row, score: 0 })),
    hasMore,
    cursor: hasMore && last ? { kind: "keyset", fingerprint: args.fp, after: { recordedKey: last.recordedKey, id: last.id } } : null,
    poolSize: null,
    snapshot: {
      // Nothing is ranked: no leg runs.
      legs: [],
      // Only a first page can tell that nothing is stored under these filters.
      abstained: args.cursor === null && hits.length === 0,
      evidence: { bestCosine: null, anyLexical: args.query !== null && hits.length > 0, scoreGap: null, termCoverage: null },
    },
  };
}

function toHit(row: HitRow, score: number, projection: SearchProjection): RankedHit {
  // A compact hit carries no excerpt; skip cutting one.
  const cut = projection === "full" ? excerpt(row.contentHead) : { text: "", truncated: false };
  return {
    id: row.id,
    memoryType: row.memoryType,
    topic: row.topic,
    excerpt: cut.text,
    contentLength: row.contentLength,
    truncated: cut.truncated || row.contentLength > row.contentHead.length,
    score,
    scope: row.scope,
    project: row.project,
    recordedAt: parseTimestamptz(row.recordedText),
  };
}

/** Under a `require` policy an unscoped search is refused, naming the registered scopes to choose from. */
async function scopeRequired(db: Queryable, tenantId: string): Promise<AppError> {
  const { names, total } = await selectScopeNames(db, tenantId, LISTED_SCOPES);
  const more = total > names.length ? ` (+${total - names.length} more)` : "";
  const choices = names.length > 0 ? `registered scopes: ${names.join(", ")}${more}` : "no scope is registered yet (create one with configure_scope)";
  return new AppError("invalid_input", `scope: this account's retrieval policy requires a scope on every search; ${choices}`, { field: "scope" });
}

function dateOrNull(iso: string | undefined): Date | null {
  return iso === undefined ? null : new Date(iso);
}

function round(x: number): number {
  return Number(x.toFixed(SCORE_DECIMALS));
}

function roundOrNull(x: number | null): number | null {
  return x === null ? null : round(x);
}
