/**
 * The similar-pair scan's policy: every threshold and bound that decides which pairs of live
 * memories the consolidator is shown. Bands are checked highest first; a pair belongs to the first
 * band whose threshold its cosine similarity reaches, and below the lowest band it is not a pair.
 * What each band becomes (which edge type is proposed) is the consolidator's decision.
 */
export const SIMILAR_PAIR_POLICY = {
  bands: [
    /**
     * Restates the same thing: worth a supersedes/updates proposal (the reference design's 0.92).
     * With e5-small-v2 it holds 30 of the fixtures' 57 real corrections and 5 of their 27,350
     * other pairs (docs/consolidation.md).
     */
    { band: "near_duplicate", threshold: 0.92 },
    /**
     * About the same thing: worth an advisory extends link. 0.85 suited USE Lite, whose cosines
     * run lower; e5-small-v2 puts 309 of the fixtures' other pairs at 0.85 or more, 13 at 0.90.
     */
    { band: "related", threshold: 0.9 },
  ],
  /** Most pairs one scan returns for a tenant (most similar first). */
  maxPairs: 200,
  /**
   * The scan starts from this many of the tenant's most recent live embedded memories. Older pairs
   * were in the window when their newer member was recorded, so each run stays bounded.
   */
  scanRows: 2000,
  /** Nearest neighbours fetched per memory through the HNSW index. */
  neighboursPerRow: 10,
  /** HNSW candidate list for the scan (recall over speed; search keeps the default). */
  efSearch: 200,
} as const;

export type PairBand = (typeof SIMILAR_PAIR_POLICY.bands)[number]["band"];

/** The lowest similarity that makes a pair at all. */
export const MIN_PAIR_SIMILARITY = Math.min(...SIMILAR_PAIR_POLICY.bands.map((b) => b.threshold));

/** The band a similarity falls in, or null below every threshold. */
export function bandOf(similarity: number): { band: PairBand; threshold: number } | null {
  for (const b of SIMILAR_PAIR_POLICY.bands) if (similarity >= b.threshold) return { band: b.band, threshold: b.threshold };
  return null;
}
