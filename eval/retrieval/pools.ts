import type { Embedder } from "@3ngram/embeddings";
import { vectorParam, withTenant, type Pool } from "@3ngram/db";
import {
  HNSW_FILTERED_SCAN,
  SEARCH_POLICY,
  abstentionEvidence,
  candidatePoolSize,
  gatherCandidates,
  normaliseQuery,
  rank,
  shouldAbstain,
  type Candidate,
  type SearchPolicy,
  type VerdictEvidence,
} from "@3ngram/search";
import type { Fixture } from "./fixture.js";
import { K, type QueryOutcome } from "./metrics.js";

/** Pool gathers in flight at once (the results do not depend on it). */
const GATHERS_IN_FLIGHT = 4;

/** Runs fn over items with at most `inFlight` calls pending; answers the results in item order. */
export async function mapInFlight<T, R>(items: readonly T[], inFlight: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const at = next++;
      results[at] = await fn(items[at]!, at);
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, items.length) }, lane));
  return results;
}

/** Every query's candidate pool, gathered once by the search service's own SQL. */
export interface QueryPools {
  fixture: Fixture;
  /** The full-text vector the pools were gathered from (a policy is ranked on pools of its own). */
  tokens: SearchPolicy["tokens"];
  /** Per query, in fixture order. */
  pools: Candidate[][];
  /** The embedding model the queries were embedded with (the abstention verdict is calibrated per model). */
  model: string;
  fixtureIdOf: ReadonlyMap<string, string>;
}

/**
 * Gathers each query's pool as the search role under RLS, with the given policy's pool settings
 * (a search of limit K, narrowed to the query's scope when it names one, as the gates run), so a
 * ranking can be tried offline. The lexical leg's rows are those the policy's own lexical score
 * selects; ranking them offline under the other score is an approximation the fit accepts
 * (docs/evals.md).
 */
export async function gatherPools(
  pool: Pool,
  tenantId: string,
  embedder: Embedder,
  fixture: Fixture,
  fixtureIdOf: ReadonlyMap<string, string>,
  policy: SearchPolicy = SEARCH_POLICY,
): Promise<QueryPools> {
  const queries = fixture.queries.map((q) => normaliseQuery(q.query));
  // One call for all: the model's workers share them out (each text is still embedded on its own,
  // so the vectors are those of one call per query).
  const vectors = await embedder.embed(queries, { purpose: "query" });
  // A few at a time: each is a short read-only transaction, and PostgreSQL answers several at once.
  const pools = await mapInFlight(fixture.queries, GATHERS_IN_FLIGHT, (q, i) => {
    const query = queries[i]!;
    const vector = vectors[i];
    return withTenant(pool, { role: "threengram_search", tenantId, readOnly: true, settings: HNSW_FILTERED_SCAN }, (db) =>
      gatherCandidates(db, {
        eligibility: {
          tenantId,
          memoryTypes: [],
          scopeNames: q.scope === undefined ? null : [q.scope],
          projects: [],
          status: "active",
          recordedAfter: null,
          recordedBefore: null,
          asOf: null,
        },
        query,
        policy,
        vector: vector ? vectorParam(vector, embedder.model) : null,
        pool: candidatePoolSize(K, policy),
      }).then((gathered) => gathered.candidates),
    );
  });
  return { fixture, tokens: policy.tokens, pools, model: embedder.model, fixtureIdOf };
}

/** The outcomes of every query under one policy, ranked offline from the gathered pools, with each one's full evidence. */
export function outcomesUnder(p: QueryPools, policy: SearchPolicy): (QueryOutcome & { full: VerdictEvidence })[] {
  return p.fixture.queries.map((query, i) => {
    const ranked = rank(p.pools[i]!, normaliseQuery(query.query), policy);
    const evidence = abstentionEvidence(ranked);
    return {
      query,
      ranked: ranked.slice(0, K).map((r) => p.fixtureIdOf.get(r.id) ?? "?"),
      abstained: shouldAbstain(evidence, ranked.length, p.model, policy),
      evidence: { bestCosine: evidence.bestCosine, termCoverage: evidence.termCoverage, scoreGap: evidence.scoreGap },
      full: evidence,
    };
  });
}
