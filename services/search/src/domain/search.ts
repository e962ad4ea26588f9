import { withTenant, toVectorLiteral, type Pool } from "@3ngram/db";
import type { Embedder } from "@3ngram/embeddings";
import type { Logger } from "@3ngram/runtime";
import { CANDIDATE_POOL_FACTOR, CANDIDATE_POOL_FLOOR, excerpt, type SearchInput, type SearchLeg } from "@3ngram/schema";
import { selectCandidates, type CandidateRow, type QueryVector } from "../db/candidates.js";
import { fusedScore, isShortQuery, normaliseFts, shouldAbstain } from "./policy.js";

export interface SearchDeps {
  pool: Pool;
  /** Read-only database role. */
  role: string;
  embedder: Embedder | null;
  queryEmbedBudgetMs: number;
  log: Logger;
}

export interface RankedHit {
  id: string;
  memoryType: CandidateRow["memoryType"];
  topic: string;
  excerpt: string;
  contentLength: number;
  truncated: boolean;
  score: number;
  scope: string;
  project: string | null;
  recordedAt: Date;
}

export interface SearchResult {
  hits: RankedHit[];
  hasMore: boolean;
  coverage: {
    legs: { leg: SearchLeg; available: boolean; candidates: number }[];
    poolSize: number;
    abstained: boolean;
  };
}

export function candidatePoolSize(limit: number): number {
  return Math.max(limit * CANDIDATE_POOL_FACTOR, CANDIDATE_POOL_FLOOR);
}

/**
 * Fused search within one tenant: gather candidates from every available leg, score them with the
 * policy, and report what was searched. When the query cannot be embedded the vector leg is marked
 * unavailable and the answer comes from full-text and recency alone.
 */
export async function search(deps: SearchDeps, tenantId: string, input: SearchInput): Promise<SearchResult> {
  const vector = await embedQuery(deps, input.query);
  const pool = candidatePoolSize(input.limit);
  const memoryTypes = input.memoryTypes ?? (input.memoryType ? [input.memoryType] : []);
  const candidates = await withTenant(deps.pool, { role: deps.role, tenantId, readOnly: true }, (db) =>
    selectCandidates(db, {
      tenantId,
      query: input.query,
      vector,
      pool,
      filters: {
        memoryTypes,
        scope: input.scope ?? null,
        projects: input.project ? [input.project] : [],
        status: input.status ?? "active",
      },
    }),
  );

  const short = isShortQuery(input.query);
  const ftsNorm = normaliseFts(candidates);
  const ranked = candidates
    .map((c) => ({ c, score: fusedScore(c, ftsNorm(c), short) }))
    .sort((a, b) => b.score - a.score || (a.c.id < b.c.id ? -1 : 1));
  const page = ranked.slice(0, input.limit);
  const abstained = shouldAbstain(candidates);

  return {
    hits: page.map(({ c, score }) => {
      const cut = excerpt(c.contentHead);
      return {
        id: c.id,
        memoryType: c.memoryType,
        topic: c.topic,
        excerpt: cut.text,
        contentLength: c.contentLength,
        truncated: cut.truncated || c.contentLength > c.contentHead.length,
        score: Number(score.toFixed(6)),
        scope: c.scope,
        project: c.project,
        recordedAt: c.recordedAt,
      };
    }),
    hasMore: ranked.length > input.limit,
    coverage: {
      legs: [
        { leg: "vector", available: vector !== null, candidates: candidates.filter((c) => c.fromVector).length },
        { leg: "fts", available: true, candidates: candidates.filter((c) => c.fromFts).length },
        { leg: "recency", available: true, candidates: candidates.filter((c) => c.fromRecency).length },
      ],
      poolSize: pool,
      abstained,
    },
  };
}

async function embedQuery(deps: SearchDeps, query: string): Promise<QueryVector | null> {
  if (!deps.embedder) return null;
  const embedder = deps.embedder;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), deps.queryEmbedBudgetMs);
  try {
    const [vector] = await Promise.race([
      embedder.embed([query], { signal: abort.signal }),
      new Promise<never>((_, reject) => abort.signal.addEventListener("abort", () => reject(new Error("timeout")))),
    ]);
    if (!vector || vector.length !== embedder.dimensions) return null;
    return { literal: toVectorLiteral(vector), model: embedder.model, dimensions: vector.length };
  } catch (err) {
    deps.log.warn({ error: (err as Error).name }, "query embedding failed; vector leg unavailable");
    return null;
  } finally {
    clearTimeout(timer);
  }
}
