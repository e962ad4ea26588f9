/**
 * The ranking policy: every number that decides what search ranks where, how big the candidate
 * pool is and when the answer is "not stored" lives here and nowhere else. The SQL gathers
 * features (cosine, BM25, age, topic match, superseded); these functions turn them into scores and
 * a verdict. The fit over three data sets (docs/evals.md) chose the numbers; change them here only.
 */
import { bundledModel } from "@3ngram/embeddings";
import type { AbstentionEvidence } from "@3ngram/schema";
import type { CandidateRow, Tokens } from "../db/candidates.js";

export interface SearchPolicy {
  /**
   * Each leg's weight in the fused score: score = vector·vectorLeg + fts·lexicalLeg + recency·decay
   * + topic bonus − supersession penalty, where the leg values come from `fusion` (each in [0, 1]).
   */
  weights: {
    /** The vector leg: cosine similarity to the query. */
    vector: number;
    /** The lexical leg: BM25 over the memory's full-text vector (see bm25). */
    fts: number;
    /** 0.5 ^ (age / half-life) on recorded time, in (0, 1]. */
    recency: number;
  };
  /**
   * How a leg's raw scores become comparable inside the candidate pool (only candidates the leg
   * scored take part; the others get 0 from it):
   * - "rrf": reciprocal rank, (k + 1) / (k + rank), so the leg's first candidate gets 1 (the
   *   textbook fusion, which ignores the legs' scales);
   * - "minmax": min-max over the leg's candidates (the weakest gets 0, the best 1; all equal: 1).
   */
  fusion: { method: "rrf" | "minmax"; rrfK: number };
  /**
   * How short queries (at most topicMatch.maxTokens words: keyword lookups such as a name or an
   * identifier) are fused. "rrf": reciprocal-rank fusion with both legs weighted alike (half each,
   * so the score stays on the scale the supersession penalty is set for), the textbook fusion that
   * lets a word only one memory holds put that memory first, where an embedding model knows little
   * of a made-up token. "same": like every other query.
   */
  shortQueryFusion: "rrf" | "same";
  /**
   * Which full-text vector the lexical leg searches: "english" (memories.search_tsv, stems only)
   * or "memory" (memories.lexical_tsv, migration 0012: stems, raw words, identifiers whole and
   * split, the simple fallback). The query's terms come from the matching function.
   */
  tokens: Tokens;
  /**
   * BM25 term saturation (k1) and length normalisation (b). Document frequencies are the eligible
   * memories holding the word (counted by the full-text probe); N and the average length come
   * from the tenant's statistics (memory_text_stats), length being the count of distinct lexemes.
   */
  bm25: { k1: number; b: number };
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
   * are OR-ed before websearch_to_tsquery), and BM25 rewards sharing more of them. "all": every
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
   * The verdict is "not stored" when the evidence
   *   bestCosine + termCoverageWeight · termCoverage + weightedCoverageWeight · weightedCoverage
   *     + topMatchWeight · topMatch
   * is below minEvidence (or there is no candidate at all). See abstentionEvidence for the terms;
   * the fit tries the cosine alone and with one of the others (docs/evals.md).
   *
   * Cosines mean different things from one model to another, so the numbers hold for the model
   * they were calibrated with only (its stored id). With any other model (an OpenAI-compatible
   * one, the hashing embedder, another bundled model) or none, the verdict falls back to the
   * words: "not stored" when no candidate shares a word with the query.
   */
  abstention: {
    model: string;
    minEvidence: number;
    termCoverageWeight: number;
    weightedCoverageWeight: number;
    topMatchWeight: number;
  };
}

export const SEARCH_POLICY: SearchPolicy = {
  // Chosen by `npm run eval:retrieval -- --fit` on three data sets, two fixtures of ours and
  // LoCoMo's development half (docs/evals.md, "Choosing the ranking"): reciprocal-rank fusion with
  // k = 60 is the baseline that fits nothing; a min-max weighted sum with one weight, the lexical
  // leg's 0.2, beat it on the worst data set (LoCoMo, +0.038 ± 0.008 in mean query score) without
  // losing on the fixtures. BM25's k1 and b are the textbook values. Recency and the topic bonus
  // keep their specified roles (no data set can measure them: every memory is written within
  // seconds, and keyword lookups already rank first): recency only breaks near-ties.
  weights: {
    vector: 1.0,
    fts: 0.2,
    recency: 0.05,
  },
  fusion: { method: "minmax", rrfK: 60 },
  shortQueryFusion: "rrf",
  tokens: "english",
  bm25: { k1: 1.2, b: 0.75 },
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
  // Two signals, calibrated on the three data sets together: the best cosine plus 0.1 × the share of
  // the query's idf mass the first hit holds. The threshold (0.7775 on the sum's 0-1 scale, times
  // the weights' total 1.1) sits halfway between the strongest absent-topic query of either fixture
  // and the next answerable query above it, so every absent topic abstains.
  abstention: { model: bundledModel("e5-small-v2").id, minEvidence: 0.8553, termCoverageWeight: 0, weightedCoverageWeight: 0, topMatchWeight: 0.1 },
};

/** What one candidate is ranked by: the features the SQL reports, and the lexical score and idf mass computed from its term counts (candidates.ts). */
export type CandidateFeatures = Pick<CandidateRow, "cosine" | "lexical" | "ageDays" | "topicMatch" | "superseded"> & {
  /** BM25 of the row against the query's search terms (0 without a match; see bm25Score). */
  ftsRaw: number;
  /**
   * Per query, the same on every candidate: how many distinct search terms the query has, and how
   * many of them occur in at least one eligible memory. Absent when the SQL did not count them.
   */
  queryTerms?: {
    total: number;
    stored: number;
    /** Sum of the terms' BM25 idf (a term stored nowhere weighs the most), and of the stored ones'. */
    idfTotal?: number;
    idfStored?: number;
  };
  /** Sum of the idf of the query terms this row holds; absent when not measured. */
  idfMatched?: number;
};

/**
 * The evidence the abstained verdict is decided from: the public evidence (reported in the coverage
 * envelope) and two idf signals the verdict may weigh but the answer does not carry.
 */
export type VerdictEvidence = AbstentionEvidence & {
  /**
   * Term coverage weighted by idf: a question whose rare, specific words are stored nowhere scores
   * low even when its common words are stored. Null or absent when not measured.
   */
  weightedCoverage?: number | null;
  /**
   * Share of the query's idf mass held by the first ranked candidate: a stored answer usually holds
   * the question's specific words. Null or absent when not measured.
   */
  topMatch?: number | null;
};

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

/**
 * BM25's inverse document frequency, in its non-negative form: ln(1 + (N − df + 0.5) / (df + 0.5)).
 * N is at least df (the two come from different counts and may disagree by a few rows).
 */
export function bm25Idf(df: number, docs: number): number {
  const n = Math.max(docs, df);
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/** One term's BM25 contribution: idf · tf (k1 + 1) / (tf + k1 (1 − b + b · length / average)). */
export function bm25Term(idf: number, tf: number, length: number, averageLength: number, policy: Pick<SearchPolicy, "bm25"> = SEARCH_POLICY): number {
  if (tf <= 0) return 0;
  const { k1, b } = policy.bm25;
  const relative = averageLength > 0 ? length / averageLength : 1;
  return (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + b * relative));
}

/** BM25 of one row: the sum over the query terms it holds (term → its frequency in the row). */
export function bm25Score(
  termFrequencies: Readonly<Record<string, number>>,
  idf: ReadonlyMap<string, number>,
  length: number,
  averageLength: number,
  policy: Pick<SearchPolicy, "bm25"> = SEARCH_POLICY,
): number {
  let score = 0;
  for (const [term, tf] of Object.entries(termFrequencies)) score += bm25Term(idf.get(term) ?? 0, tf, length, averageLength, policy);
  return score;
}

type LegInput = Pick<CandidateFeatures, "cosine" | "lexical" | "ftsRaw"> & { id: string };

/**
 * One leg's value for every candidate, normalised inside the pool by the policy's fusion method.
 * `raw` answers the leg's score, or null when the leg did not score the candidate.
 */
export function legValues<C extends LegInput>(
  candidates: readonly C[],
  raw: (c: C) => number | null,
  policy: SearchPolicy = SEARCH_POLICY,
): Map<string, number> {
  const scored = candidates.flatMap((c) => {
    const x = raw(c);
    return x === null ? [] : [{ id: c.id, x }];
  });
  const values = new Map<string, number>();
  if (scored.length === 0) return values;
  const { method, rrfK } = policy.fusion;
  if (method === "minmax") {
    const best = Math.max(...scored.map((s) => s.x));
    const worst = Math.min(...scored.map((s) => s.x));
    for (const s of scored) values.set(s.id, best === worst ? 1 : (s.x - worst) / (best - worst));
    return values;
  }
  // Ties share the better rank, so equal scores never depend on id order.
  scored.sort((a, b) => b.x - a.x);
  let rankOf = 1;
  scored.forEach((s, i) => {
    if (i > 0 && s.x < scored[i - 1]!.x) rankOf = i + 1;
    values.set(s.id, (rrfK + 1) / (rrfK + rankOf));
  });
  return values;
}

/** The vector and lexical legs' normalised values over a pool. */
function fuseLegs<C extends LegInput>(
  candidates: readonly C[],
  policy: SearchPolicy = SEARCH_POLICY,
): { vector: Map<string, number>; lexical: Map<string, number> } {
  return {
    vector: legValues(candidates, (c) => c.cosine, policy),
    lexical: legValues(candidates, (c) => (c.lexical ? c.ftsRaw : null), policy),
  };
}

function recencyDecay(ageDays: number, policy: SearchPolicy = SEARCH_POLICY): number {
  return Math.pow(0.5, Math.max(0, ageDays) / policy.recencyHalfLifeDays);
}

/** The fused score from the legs' normalised values (each in [0, 1]). */
export function fusedScore(c: CandidateFeatures, legs: { vector: number; lexical: number }, shortQuery: boolean, policy: SearchPolicy = SEARCH_POLICY): number {
  const { weights, topicMatch, supersessionPenalty } = policy;
  const bonus = shortQuery && c.topicMatch ? topicMatch.bonus : 0;
  const penalty = c.superseded ? supersessionPenalty : 0;
  return weights.vector * legs.vector + weights.fts * legs.lexical + weights.recency * recencyDecay(c.ageDays, policy) + bonus - penalty;
}

/**
 * Scores every candidate and orders them: score descending, then id ascending (a total, stable order).
 *
 * A candidate without a vector of the query's model, in a pool where others have one, is a memory
 * the model has not embedded yet: a model change is being re-embedded in the background, or its
 * embedding failed and waits for a retry. Scored 0 on the vector leg it would sink under any
 * memory that has a vector, however well its words match; its lexical standing takes the vector
 * leg's place instead, on that leg's scale (the best lexical match counts as close as the pool's
 * closest vector). A pool where every candidate has a vector, or none has, ranks as before.
 *
 * Each candidate's score is written onto it (a pool ranked again under another policy is scored
 * again), and the answer is the same candidates, best first.
 */
export function rank<C extends CandidateFeatures & { id: string }>(candidates: readonly C[], query: string, policy: SearchPolicy = SEARCH_POLICY): Scored<C>[] {
  const short = isShortQuery(query, policy);
  const fusing = short && policy.shortQueryFusion === "rrf" ? keywordFusion(policy) : policy;
  const legs = fuseLegs(candidates, fusing);
  const closest = legs.vector.size > 0 ? Math.max(...legs.vector.values()) : 0;
  const scored = candidates as readonly Scored<C>[];
  for (const candidate of scored) {
    const lexical = legs.lexical.get(candidate.id) ?? 0;
    const vector = legs.vector.get(candidate.id) ?? lexical * closest;
    candidate.score = fusedScore(candidate, { vector, lexical }, short, fusing);
  }
  return [...scored].sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** A candidate with its fused score. */
export type Scored<C> = C & { score: number };

/** The policy a short query is fused under: reciprocal rank, both legs weighted alike (shortQueryFusion). */
function keywordFusion(policy: SearchPolicy): SearchPolicy {
  return { ...policy, fusion: { ...policy.fusion, method: "rrf" }, weights: { ...policy.weights, vector: 0.5, fts: 0.5 } };
}

/** The evidence over a ranked pool (best first). */
export function abstentionEvidence(ranked: readonly Scored<CandidateFeatures>[]): VerdictEvidence {
  let bestCosine: number | null = null;
  let anyLexical = false;
  for (const candidate of ranked) {
    if (candidate.cosine !== null) bestCosine = bestCosine === null ? candidate.cosine : Math.max(bestCosine, candidate.cosine);
    if (candidate.lexical || candidate.topicMatch) anyLexical = true;
  }
  const scoreGap = ranked.length >= 2 ? ranked[0]!.score - ranked[1]!.score : null;
  const terms = ranked[0]?.queryTerms;
  const termCoverage = terms && terms.total > 0 ? terms.stored / terms.total : null;
  const idfTotal = terms?.idfTotal ?? 0;
  const weightedCoverage = idfTotal > 0 && terms?.idfStored !== undefined ? terms.idfStored / idfTotal : null;
  const top = ranked[0]?.idfMatched;
  const topMatch = idfTotal > 0 && top !== undefined ? top / idfTotal : null;
  return { bestCosine, anyLexical, scoreGap, termCoverage, weightedCoverage, topMatch };
}

/**
 * Whether the honest answer is "not stored". The nearest memory's cosine carries most of it; a
 * question about a nearby but absent topic can come as close as a loosely paraphrased answerable
 * one, so the verdict adds, with a small weight, how much of the question's specific vocabulary
 * the first hit holds (each signal clamped to [0, 1]). The sum must reach minEvidence. A signal
 * that could not be measured (no vector leg, a query of stop words only) is left out and the
 * threshold shrinks in proportion to the weight that remains, so a strong full-text answer still
 * counts as found when the model is down. No candidates at all: abstain. Calibrated on three data
 * sets together (docs/evals.md), for one model: `model` is the id of the model queries are
 * embedded with (null without one), and any model but the calibrated one gets the words' verdict.
 */
export function shouldAbstain(evidence: VerdictEvidence, candidates: number, model: string | null, policy: SearchPolicy = SEARCH_POLICY): boolean {
  if (candidates === 0) return true;
  if (model !== policy.abstention.model) return !evidence.anyLexical;
  const score = evidenceScore(evidence, policy.abstention);
  return score === null || score < policy.abstention.minEvidence;
}

/**
 * The fused evidence, scaled to the full weight: Σ weight · clamp(signal) over the measured
 * signals, times (total weight / measured weight), so a missing signal shrinks the threshold in
 * proportion instead of counting as zero. Null when nothing could be measured.
 */
export function evidenceScore(evidence: VerdictEvidence, weights: Omit<SearchPolicy["abstention"], "minEvidence" | "model">): number | null {
  const { termCoverageWeight, weightedCoverageWeight, topMatchWeight } = weights;
  const signals: Array<[number | null | undefined, number]> = [
    [evidence.bestCosine, 1],
    [evidence.termCoverage, termCoverageWeight],
    [evidence.weightedCoverage, weightedCoverageWeight],
    [evidence.topMatch, topMatchWeight],
  ];
  let fused = 0;
  let measured = 0;
  let total = 0;
  for (const [value, weight] of signals) {
    total += weight;
    if (value === null || value === undefined || weight === 0) continue;
    fused += weight * Math.min(1, Math.max(0, value));
    measured += weight;
  }
  return measured === 0 ? null : (fused * total) / measured;
}
