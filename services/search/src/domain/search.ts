import { createHash } from "node:crypto";
import { AppError } from "@3ngram/errors";
import { withPreparedStatements, withTenant, type Pool, type Queryable } from "@3ngram/db";
import type { Logger } from "@3ngram/runtime";
import {
  MAX_FROZEN_CURSOR_IDS,
  excerpt,
  type AppliedFilters,
  type CompactSearchHit,
  type MemoryStatus,
  type MemoryType,
  type SearchHit,
  type SearchInput,
  type SearchOutput,
} from "@3ngram/schema";
import { HNSW_FILTERED_SCAN, type QueryTerms } from "../db/candidates.js";
import { CATCH_UP_SNAPSHOT_SETTING } from "../db/stored-vectors.js";
import type { Eligibility, HitRow } from "../db/eligibility.js";
import { selectChronological, selectEligibleByIds } from "../db/pages.js";
import { selectRetrievalScope, selectScopeAndQueryTerms, selectScopeNames } from "../db/retrieval-scope.js";
import { gatherCandidates } from "./candidates.js";
import { FP_BYTES, decodeCursor, encodeCursor, foreignCursor, type Cursor, type FrozenCursor, type KeysetCursor, type PageSnapshot } from "./cursor.js";
import { abstentionEvidence, candidatePoolSize, rank, SEARCH_POLICY, type SearchPolicy, shouldAbstain } from "./policy.js";
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

/** A row a page answers, with the score it is reported at (0 in chronological order). */
type ScoredRow = HitRow & { score: number };

/** Where a page ends: its hits, whether more follow, the cursor to them, and how the pool was searched. */
interface Page {
  hits: ScoredRow[];
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
export async function search(deps: SearchDeps, tenantId: string, input: SearchInput): Promise<SearchOutput> {
  const policy = deps.policy ?? SEARCH_POLICY;
  // A garbled cursor is refused before any work.
  const cursor = input.cursor !== undefined ? decodeCursor(input.cursor) : null;
  const query = input.query !== undefined ? normaliseQuery(input.query) : null;
  const asOf = input.asOf ?? null;
  const memoryTypes: MemoryType[] = input.memoryTypes ? [...new Set(input.memoryTypes)] : input.memoryType ? [input.memoryType] : [];
  const projects = input.projects ? [...new Set(input.projects)] : input.project !== undefined ? [input.project] : [];
  // Archived rows only on request; a point in time lifts the active-only default.
  const status: MemoryStatus | null = input.status ?? (asOf ? null : "active");
  const recordedAfter = input.recordedAfter ?? null;
  const recordedBefore = input.recordedBefore ?? null;

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
    const filters: AppliedFilters = { memoryTypes, scope: scope.scope, projects, status, recordedAfter, recordedBefore };
    const eligibility: Eligibility = { tenantId, memoryTypes, scopeNames: scope.names, projects, status, recordedAfter, recordedBefore, asOf };
    const fp = cursorFingerprint(tenantId, input, { query, filters, appliedScope });
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
    // The public answer: one projection per page, every hit full or every hit compact.
    return {
      hits: input.projection === "compact" ? page.hits.map(compactHit) : page.hits.map(fullHit),
      count: page.hits.length,
      hasMore: page.hasMore,
      ...(page.cursor ? { nextCursor: encodeCursor(page.cursor) } : {}),
      ...(appliedScope !== null ? { appliedScope } : {}),
      coverage: {
        order: input.order,
        legs: page.snapshot.legs,
        filters,
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
  const { candidates, vectorSource } = await gatherCandidates(db, {
    eligibility: args.eligibility,
    query: args.query,
    policy: args.policy,
    vector: args.vector,
    nominate: nominate ? (vector) => nominate(vector, pool) : undefined,
    pool,
    termCounts: args.termCounts,
    terms: args.terms,
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
      termCoverage: roundOrNull(evidence.termCoverage),
    },
  };
  // The evidence read the exact scores; from here on each is what the answer reports and the cursor freezes.
  for (const candidate of ranked) candidate.score = round(candidate.score);
  const hasMore = ranked.length > args.limit;
  return {
    hits: ranked.slice(0, args.limit),
    hasMore,
    cursor: hasMore
      ? { kind: "frozen", fingerprint: args.fp, offset: args.limit, ids: ranked.map((r) => r.id), scores: ranked.map((r) => r.score), snapshot }
      : null,
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
    if (row) hits.push(Object.assign(row, { score: cursor.scores[next]! }));
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
    hits: hits.map((row) => Object.assign(row, { score: 0 })),
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

/** A full hit: the row's own fields, and the excerpt cut from its head. */
function fullHit(row: ScoredRow): SearchHit {
  const cut = excerpt(row.contentHead);
  return {
    id: row.id,
    memoryType: row.memoryType,
    topic: row.topic,
    content: cut.text,
    contentLength: row.contentLength,
    truncated: cut.truncated || row.contentLength > row.contentHead.length,
    scope: row.scope,
    project: row.project,
    recordedAt: row.recordedAt,
    score: row.score,
  };
}

/** A compact hit carries no excerpt: none is cut. */
function compactHit({ id, memoryType, topic, score }: ScoredRow): CompactSearchHit {
  return { id, memoryType, topic, score };
}

/**
 * What every cursor of this search is bound to: the first FP_BYTES of sha256 over its canonical
 * form (tenant, order, query, the filters as applied with sets sorted and instants normalised, the
 * scope asked for and the one applied). Limit and projection are left out: they may change between
 * pages.
 */
export function cursorFingerprint(
  tenantId: string,
  input: Pick<SearchInput, "order" | "scope" | "asOf">,
  search: { query: string | null; filters: AppliedFilters; appliedScope: string | null },
): string {
  const { filters } = search;
  // However an instant was spelt ("…:00Z" or "…:00.000Z"), one cursor continues it.
  const iso = (t: string | null | undefined) => (t ? new Date(t).toISOString() : null);
  const canonical = JSON.stringify([
    "search-cursor/v1",
    tenantId,
    input.order,
    search.query,
    [...new Set(filters.memoryTypes)].sort(),
    input.scope ?? null,
    search.appliedScope,
    [...new Set(filters.projects)].sort(),
    filters.status,
    iso(filters.recordedAfter),
    iso(filters.recordedBefore),
    input.asOf === undefined ? null : [iso(input.asOf.validAt), iso(input.asOf.asKnownAt)],
  ]);
  return createHash("sha256")
    .update(canonical)
    .digest("hex")
    .slice(0, FP_BYTES * 2);
}

/** Under a `require` policy an unscoped search is refused, naming the registered scopes to choose from. */
async function scopeRequired(db: Queryable, tenantId: string): Promise<AppError> {
  const { names, total } = await selectScopeNames(db, tenantId, LISTED_SCOPES);
  const more = total > names.length ? ` (+${total - names.length} more)` : "";
  const choices = names.length > 0 ? `registered scopes: ${names.join(", ")}${more}` : "no scope is registered yet (create one with configure_scope)";
  return new AppError("invalid_input", `scope: this account's retrieval policy requires a scope on every search; ${choices}`, { field: "scope" });
}

function round(x: number): number {
  return Number(x.toFixed(SCORE_DECIMALS));
}

function roundOrNull(x: number | null): number | null {
  return x === null ? null : round(x);
}
