import { withTenant, type Pool } from "@3ngram/db";
import type { Logger } from "@3ngram/runtime";
import { HNSW_FILTERED_SCAN } from "../db/candidates.js";
import { selectSimilarPairs, type PairRow } from "../db/similar-pairs.js";
import { MIN_PAIR_SIMILARITY, SIMILAR_PAIR_POLICY, bandOf, type PairBand } from "./pair-policy.js";

export interface SimilarPairsDeps {
  pool: Pool;
  /** Read-only database role. */
  role: string;
  /** The configured embedding model; null when none is configured (then there is nothing to compare). */
  embedding: { model: string; dimensions: number } | null;
  log: Logger;
}

interface SimilarPair extends PairRow {
  band: PairBand;
  threshold: number;
}

export interface SimilarPairsResult {
  pairs: SimilarPair[];
  scanned: number;
  /** Absent when no embedder is configured. */
  model?: string;
}

/**
 * The consolidation scan for one tenant: pairs of live memories close enough to be worth a
 * proposal, each labelled with its similarity band. Read-only, in one transaction as the search role.
 */
export async function similarPairs(deps: SimilarPairsDeps, tenantId: string, input: { limit: number }): Promise<SimilarPairsResult> {
  const embedding = deps.embedding;
  if (!embedding) return { pairs: [], scanned: 0 };
  // A wide candidate list, and iterative scan so the tenant and liveness filters still fill each row's k.
  const settings = { ...HNSW_FILTERED_SCAN, "hnsw.ef_search": String(SIMILAR_PAIR_POLICY.efSearch) };
  const found = await withTenant(deps.pool, { role: deps.role, tenantId, readOnly: true, settings }, (db) =>
    selectSimilarPairs(db, {
      tenantId,
      model: embedding.model,
      dimensions: embedding.dimensions,
      minSimilarity: MIN_PAIR_SIMILARITY,
      scanRows: SIMILAR_PAIR_POLICY.scanRows,
      neighboursPerRow: SIMILAR_PAIR_POLICY.neighboursPerRow,
      limit: Math.min(input.limit, SIMILAR_PAIR_POLICY.maxPairs),
    }),
  );
  const pairs: SimilarPair[] = [];
  for (const pair of found.pairs) {
    const band = bandOf(pair.similarity);
    if (band) pairs.push({ ...pair, ...band });
  }
  deps.log.info({ scanned: found.scanned, pairs: pairs.length }, "similar pairs scanned");
  return { pairs, scanned: found.scanned, model: embedding.model };
}
