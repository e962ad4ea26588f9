import type { Embedder } from "@3ngram/embeddings";
import { vectorParam, withTenant, type Pool } from "@3ngram/db";
import {
  HNSW_FILTERED_SCAN,
  SEARCH_POLICY,
  abstentionEvidence,
  candidatePoolSize,
  lexicalQueryText,
  matchesAnyTerm,
  normaliseQuery,
  rank,
  selectCandidates,
  shouldAbstain,
  type AbstentionEvidence,
  type CandidateRow,
  type SearchPolicy,
} from "@3ngram/search";
import type { Fixture } from "./fixture.js";
import { K, type QueryOutcome } from "./metrics.js";

/** Every query's candidate pool, gathered once by the search service's own SQL. */
export interface QueryPools {
  fixture: Fixture;
  /** The full-text vector the pools were gathered from (a policy is ranked on pools of its own). */
  tokens: SearchPolicy["tokens"];
  /** Per query, in fixture order. */
  pools: CandidateRow[][];
  fixtureIdOf: ReadonlyMap<string, string>;
}

/**
 * Gathers each query's pool as the search role under RLS, with the given policy's pool settings
 * (an unfiltered search of limit K, as the gate runs), so a ranking can be tried offline. The
 * lexical leg's rows are those the policy's own lexical score selects; ranking them offline under
 * the other score is an approximation the fit accepts (docs/evals.md).
 */
export async function gatherPools(
  pool: Pool,
  tenantId: string,
  embedder: Embedder,
  fixture: Fixture,
  fixtureIdOf: ReadonlyMap<string, string>,
  policy: SearchPolicy = SEARCH_POLICY,
): Promise<QueryPools> {
  const pools: CandidateRow[][] = [];
  for (const q of fixture.queries) {
    const query = normaliseQuery(q.query);
    const [vector] = await embedder.embed([query], { purpose: "query" });
    pools.push(
      await withTenant(pool, { role: "threengram_search", tenantId, readOnly: true, settings: HNSW_FILTERED_SCAN }, (db) =>
        selectCandidates(db, {
          eligibility: { tenantId, memoryTypes: [], scopeNames: null, projects: [], status: "active", recordedAfter: null, recordedBefore: null, asOf: null },
          query,
          ftsQuery: lexicalQueryText(query, policy),
          anyTerm: matchesAnyTerm(query, policy) ? { maxMatches: policy.lexicalTermMaxMatches } : undefined,
          rankWindow: policy.lexicalRankWindow,
          vector: vector ? vectorParam(vector, embedder.model) : null,
          pool: candidatePoolSize(K, policy),
          policy,
        }).then((gathered) => gathered.candidates),
      ),
    );
  }
  return { fixture, tokens: policy.tokens, pools, fixtureIdOf };
}

/** The outcomes of every query under one policy, ranked offline from the gathered pools, with each one's full evidence. */
export function outcomesUnder(p: QueryPools, policy: SearchPolicy): (QueryOutcome & { full: AbstentionEvidence })[] {
  return p.fixture.queries.map((query, i) => {
    const ranked = rank(p.pools[i]!, normaliseQuery(query.query), policy);
    const evidence = abstentionEvidence(ranked);
    return {
      query,
      ranked: ranked.slice(0, K).map((r) => p.fixtureIdOf.get(r.candidate.id) ?? "?"),
      abstained: shouldAbstain(evidence, ranked.length, policy),
      evidence: { bestCosine: evidence.bestCosine, termCoverage: evidence.termCoverage ?? null, scoreGap: evidence.scoreGap },
      full: evidence,
    };
  });
}
