import { K } from "../retrieval/metrics.js";

/** How one question fared: judged on the top K hits against its (well-formed, existing) evidence. */
export interface Judged {
  /** 1-based rank of the first evidence turn within the top K, or null. */
  rank: number | null;
  /** Evidence turns within the top K. */
  found: number;
  /** Evidence turns the question names (malformed and dangling entries excluded). */
  evidence: number;
}

export function judge(ranked: readonly string[], evidence: readonly string[]): Judged {
  const top = ranked.slice(0, K);
  const at = top.findIndex((id) => evidence.includes(id));
  return { rank: at < 0 ? null : at + 1, found: evidence.filter((id) => top.includes(id)).length, evidence: evidence.length };
}

export const LOCOMO_METRICS = ["hitAt5", "mrrAt5", "evidenceRecall"] as const;
export type LocomoMetric = (typeof LOCOMO_METRICS)[number];
export type LocomoMetrics = Record<LocomoMetric, number>;

export const LOCOMO_METRIC_LABELS: Record<LocomoMetric, string> = { hitAt5: "hit@5", mrrAt5: "MRR@5", evidenceRecall: "evidence recall" };

/**
 * hit@5: share of questions with an evidence turn in the top 5. MRR@5: mean of 1 / rank of the
 * first one (0 when none). Evidence recall: share of all evidence turns (pooled over the
 * questions, so a question naming four turns weighs four) that are in their question's top 5.
 * A question whose evidence was all malformed counts as a miss and adds no evidence turns.
 */
export function summarise(judged: readonly Judged[]): LocomoMetrics & { questions: number; hits: number } {
  const hits = judged.filter((j) => j.rank !== null).length;
  const evidence = judged.reduce((n, j) => n + j.evidence, 0);
  const n = judged.length;
  return {
    questions: n,
    hits,
    hitAt5: n === 0 ? 0 : hits / n,
    mrrAt5: n === 0 ? 0 : judged.reduce((s, j) => s + (j.rank === null ? 0 : 1 / j.rank), 0) / n,
    evidenceRecall: evidence === 0 ? 0 : judged.reduce((s, j) => s + j.found, 0) / evidence,
  };
}
