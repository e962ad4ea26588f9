/**
 * The ranking policy: every number that decides what search ranks where, how big the candidate
 * pool is and when the answer is "not stored" lives here and nowhere else. The SQL gathers
 * features (cosine, raw text rank, age, topic match, superseded); these functions turn them into
 * scores and a verdict. The golden-set evaluation calibrates the numbers; change them here only.
 */
export interface SearchPolicy {
  /** Weighted sum: score = vector·cosine + fts·ftsNorm + recency·decay + topic bonus − supersession penalty. */
  weights: {
    /** Cosine similarity clamped to [0, 1]; 0 for rows without a comparable vector. */
    vector: number;
    /** ts_rank min-max normalised over the lexically matching candidates, in [0, 1]. */
    fts: number;
    /** 0.5 ^ (age / half-life) on recorded time, in (0, 1]. */
    recency: number;
  };
  /** Age in days at which the recency feature halves. */
  recencyHalfLifeDays: number;
  /** Queries of at most maxTokens whitespace-separated tokens add bonus to rows whose topic contains the query. */
  topicMatch: { maxTokens: number; bonus: number };
  /**
   * Subtracted from a row that a later memory supersedes or updates (an incoming supersedes or
   * updates edge), so it ranks below its successor. The row stays a candidate: never filtered.
   */
  supersessionPenalty: number;
  /** Each leg fetches max(limit × factor, floor) candidates. */
  candidatePool: { factor: number; floor: number };
  /**
   * "any": a plain natural-language query matches memories that share any of its words (its words
   * are OR-ed before websearch_to_tsquery), and ts_rank rewards sharing more of them. "all": every
   * word must match (websearch_to_tsquery's own AND), which a paraphrased question rarely satisfies.
   * A query written in websearch syntax (a quoted phrase, a -excluded word) is always taken as written.
   */
  lexicalMatch: "any" | "all";
  /**
   * Under "any", a query word found in more than this many eligible memories is too common to
   * discriminate (the corpus's own stopword) and is left out of the full-text leg; if every word is
   * that common, all of them must match instead. Bounds the rows the leg ranks on large tenants.
   */
  lexicalTermMaxMatches: number;
  /** The full-text leg ranks at most this many matching rows (a cap for very broad matches). */
  lexicalRankWindow: number;
  /**
   * The verdict is "not stored" when the fused evidence
   *   bestCosine + termCoverageWeight · termCoverage + scoreGapWeight · scoreGap
   * is below minEvidence (or there is no candidate at all). See abstentionEvidence for the terms.
   */
  abstention: { minEvidence: number; termCoverageWeight: number; scoreGapWeight: number };
}

export const SEARCH_POLICY: SearchPolicy = {
  // Calibrated on the retrieval golden set (docs/evals.md): fts 0.2–0.5 tie on recall@5;
  // 0.2 has the best MRR@5 and the widest abstention margin. Recency only breaks near-ties.
  weights: {
    vector: 1.0,
    fts: 0.2,
    recency: 0.05,
  },
  recencyHalfLifeDays: 90,
  topicMatch: { maxTokens: 2, bonus: 0.5 },
  // The reference design's value: larger than any positive score, so a predecessor lands under its successor.
  supersessionPenalty: 2,
  candidatePool: { factor: 4, floor: 50 },
  // "all" (websearch_to_tsquery's AND) left paraphrased questions without a lexical leg: recall@5 0.88 vs 0.95.
  lexicalMatch: "any",
  // Above the golden set's size (179), so its metrics are unchanged. Counting a word's matches up
  // to the cap costs ~1 ms at 200 and ~17 ms at 2000 on 100k memories (docs/benchmarks.md).
  lexicalTermMaxMatches: 200,
  lexicalRankWindow: 5_000,
  // The threshold sits between the strongest absent-topic query (1.33) and the weakest answerable
  // one above it (1.36) on the golden set; see docs/evals.md for the grid it was picked from.
  abstention: { minEvidence: 1.34, termCoverageWeight: 1, scoreGapWeight: 2 },
};

/** What the SQL reports about one candidate. */
export interface CandidateFeatures {
  /** Cosine similarity to the query; null when the row has no comparable vector or the vector leg did not run. */
  cosine: number | null;
  /** Raw ts_rank against the query (0 without a match). */
  ftsRaw: number;
  /** Whether the row matches the query's full-text form. */
  lexical: boolean;
  ageDays: number;
  /** Whether the lower-cased topic contains the lower-cased query. */
  topicMatch: boolean;
  /** Whether a later memory supersedes or updates this one (as visible at the asOf point). */
  superseded: boolean;
  /**
   * Per query, the same on every candidate: how many distinct search terms the query has, and how
   * many of them occur in at least one eligible memory. Absent when the SQL did not count them.
   */
  queryTerms?: { total: number; stored: number };
}

/** The evidence behind the abstained verdict, reported in the coverage envelope. */
export interface AbstentionEvidence {
  /** Best cosine among the candidates; null when the vector leg did not run or no candidate had a vector. */
  bestCosine: number | null;
  /** Whether any candidate matched the query's words (full text, or the topic contains the query). */
  anyLexical: boolean;
  /** Fused score of the first ranked candidate minus the second; null with fewer than two. */
  scoreGap: number | null;
  /**
   * Share of the query's search terms that occur in at least one eligible memory, in [0, 1]: a
   * question whose words are stored nowhere is most likely about something not stored. Null when
   * the query has no search terms (only stop words) or they were not counted.
   */
  termCoverage?: number | null;
}

/**
 * The text handed to websearch_to_tsquery for the full-text leg. With lexicalMatch "any", a plain
 * query's words are joined with OR so a paraphrased question still matches the memories that share
 * some of its words; a query that uses websearch syntax (a quoted phrase or a -excluded word) is
 * taken as written, and so is every query under "all".
 */
export function lexicalQueryText(query: string, policy: SearchPolicy = SEARCH_POLICY): string {
  if (!matchesAnyTerm(query, policy)) return query;
  return query
    .split(/\s+/)
    .filter((word) => word !== "" && word.toLowerCase() !== "or")
    .join(" or ");
}

/** Whether the full-text leg matches any of the query's words (plain query under "any"). */
export function matchesAnyTerm(query: string, policy: SearchPolicy = SEARCH_POLICY): boolean {
  return policy.lexicalMatch === "any" && !query.includes('"') && !/(^|\s)-\S/.test(query);
}

export function candidatePoolSize(limit: number, policy: SearchPolicy = SEARCH_POLICY): number {
  return Math.max(limit * policy.candidatePool.factor, policy.candidatePool.floor);
}

export function isShortQuery(query: string, policy: SearchPolicy = SEARCH_POLICY): boolean {
  return query.trim().split(/\s+/).length <= policy.topicMatch.maxTokens;
}

/** Min-max normalisation of the lexical rank over the matching candidates; all-equal → 1. */
export function normaliseFts(candidates: readonly Pick<CandidateFeatures, "lexical" | "ftsRaw">[]): (c: Pick<CandidateFeatures, "lexical" | "ftsRaw">) => number {
  const ranks = candidates.filter((c) => c.lexical).map((c) => c.ftsRaw);
  if (ranks.length === 0) return () => 0;
  const min = Math.min(...ranks);
  const max = Math.max(...ranks);
  return (c) => (!c.lexical ? 0 : max === min ? 1 : (c.ftsRaw - min) / (max - min));
}

function recencyDecay(ageDays: number, policy: SearchPolicy = SEARCH_POLICY): number {
  return Math.pow(0.5, Math.max(0, ageDays) / policy.recencyHalfLifeDays);
}

export function fusedScore(c: CandidateFeatures, ftsNorm: number, shortQuery: boolean, policy: SearchPolicy = SEARCH_POLICY): number {
  const { weights, topicMatch, supersessionPenalty } = policy;
  const vector = Math.min(1, Math.max(0, c.cosine ?? 0));
  const bonus = shortQuery && c.topicMatch ? topicMatch.bonus : 0;
  const penalty = c.superseded ? supersessionPenalty : 0;
  return weights.vector * vector + weights.fts * ftsNorm + weights.recency * recencyDecay(c.ageDays, policy) + bonus - penalty;
}

/** Scores every candidate and orders them: score descending, then id ascending (a total, stable order). */
export function rank<C extends CandidateFeatures & { id: string }>(
  candidates: readonly C[],
  query: string,
  policy: SearchPolicy = SEARCH_POLICY,
): { candidate: C; score: number }[] {
  const short = isShortQuery(query, policy);
  const ftsNorm = normaliseFts(candidates);
  return candidates
    .map((candidate) => ({ candidate, score: fusedScore(candidate, ftsNorm(candidate), short, policy) }))
    .sort((a, b) => b.score - a.score || (a.candidate.id < b.candidate.id ? -1 : a.candidate.id > b.candidate.id ? 1 : 0));
}

/** The evidence over a ranked pool (best first). */
export function abstentionEvidence(ranked: readonly { candidate: CandidateFeatures; score: number }[]): AbstentionEvidence {
  let bestCosine: number | null = null;
  let anyLexical = false;
  for (const { candidate } of ranked) {
    if (candidate.cosine !== null) bestCosine = bestCosine === null ? candidate.cosine : Math.max(bestCosine, candidate.cosine);
    if (candidate.lexical || candidate.topicMatch) anyLexical = true;
  }
  const scoreGap = ranked.length >= 2 ? ranked[0]!.score - ranked[1]!.score : null;
  const terms = ranked[0]?.candidate.queryTerms;
  const termCoverage = terms && terms.total > 0 ? terms.stored / terms.total : null;
  return { bestCosine, anyLexical, scoreGap, termCoverage };
}

/**
 * Whether the honest answer is "not stored". With the bundled offline model no single signal
 * separates "not stored" from "found" (unrelated questions reach the cosine of paraphrased ones),
 * so the verdict sums three: how close the nearest memory is in meaning (best cosine), how much of
 * the question's vocabulary is stored at all (term coverage), and how clearly the first hit stands
 * out from the second (score gap), each clamped to [0, 1] (a gap over a demoted predecessor can
 * exceed 1). The sum must reach minEvidence. A signal that could not be measured (no vector leg,
 * a query of stop words only) is left out and the threshold shrinks in proportion to the weight
 * that remains, so a strong full-text answer still counts as found when the model is down.
 * No candidates at all: abstain. Calibrated on the golden set (docs/evals.md).
 */
export function shouldAbstain(evidence: AbstentionEvidence, candidates: number, policy: SearchPolicy = SEARCH_POLICY): boolean {
  if (candidates === 0) return true;
  const { minEvidence, termCoverageWeight, scoreGapWeight } = policy.abstention;
  const signals: Array<[number | null | undefined, number]> = [
    [evidence.bestCosine, 1],
    [evidence.termCoverage, termCoverageWeight],
    [evidence.scoreGap, scoreGapWeight],
  ];
  let fused = 0;
  let measured = 0;
  for (const [value, weight] of signals) {
    if (value === null || value === undefined) continue;
    fused += weight * Math.min(1, Math.max(0, value));
    measured += weight;
  }
  const total = 1 + termCoverageWeight + scoreGapWeight;
  return measured === 0 || fused < (minEvidence * measured) / total;
}
