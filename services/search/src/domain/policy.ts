/**
 * The fusion policy: every weight and threshold that decides ranking lives here and nowhere else.
 * First cut for the walking skeleton; the search issue calibrates these on the golden set.
 */
export const SEARCH_POLICY = {
  weights: {
    /** Cosine similarity in [0, 1]. */
    vector: 1.0,
    /** ts_rank min-max normalised over the candidate window, in [0, 1]. */
    fts: 0.2,
    /** 0.5 ^ (age / half-life) on recorded time, in (0, 1]: a tie-breaker, not a signal. */
    recency: 0.05,
  },
  recencyHalfLifeDays: 90,
  /** Short queries (names, single terms) get a bonus when the topic contains the query. */
  topicMatch: { maxTokens: 2, bonus: 0.5 },
  /**
   * Provisional abstention: with no lexical match anywhere and the best cosine under this, the
   * answer is most likely "not stored". Calibrated for the bundled model in the search issue.
   */
  abstainBelowCosine: 0.35,
} as const;

export interface CandidateFeatures {
  cosine: number | null;
  ftsRaw: number;
  lexical: boolean;
  ageDays: number;
  topicMatch: boolean;
}

export function isShortQuery(query: string): boolean {
  return query.trim().split(/\s+/).length <= SEARCH_POLICY.topicMatch.maxTokens;
}

/** Min-max normalisation of the lexical rank over the matching candidates; all-equal → 1. */
export function normaliseFts(candidates: readonly CandidateFeatures[]): (c: CandidateFeatures) => number {
  const ranks = candidates.filter((c) => c.lexical).map((c) => c.ftsRaw);
  if (ranks.length === 0) return () => 0;
  const min = Math.min(...ranks);
  const max = Math.max(...ranks);
  return (c) => (!c.lexical ? 0 : max === min ? 1 : (c.ftsRaw - min) / (max - min));
}

export function fusedScore(c: CandidateFeatures, ftsNorm: number, shortQuery: boolean): number {
  const { weights, recencyHalfLifeDays, topicMatch } = SEARCH_POLICY;
  const vector = Math.max(0, c.cosine ?? 0);
  const recency = Math.pow(0.5, Math.max(0, c.ageDays) / recencyHalfLifeDays);
  const bonus = shortQuery && c.topicMatch ? topicMatch.bonus : 0;
  return weights.vector * vector + weights.fts * ftsNorm + weights.recency * recency + bonus;
}

export function shouldAbstain(candidates: readonly CandidateFeatures[]): boolean {
  if (candidates.length === 0) return true;
  const anyLexical = candidates.some((c) => c.lexical || c.topicMatch);
  const bestCosine = Math.max(...candidates.map((c) => c.cosine ?? 0));
  return !anyLexical && bestCosine < SEARCH_POLICY.abstainBelowCosine;
}
