import type { FixtureQuery } from "./fixture.js";

/** How many hits a query is judged on: the search tool's default page. */
export const K = 5;

/** What one query returned, in fixture ids. */
export interface QueryOutcome {
  query: FixtureQuery;
  /** Fixture ids of the hits, best first (at most K are judged). */
  ranked: string[];
  abstained: boolean;
  /** The envelope's abstention evidence (null where the response left a signal out). */
  evidence?: { bestCosine: number | null; termCoverage: number | null; scoreGap: number | null };
}

export const METRIC_NAMES = ["recallAt5", "mrrAt5", "supersession", "abstentionPrecision", "answerableAboveTau"] as const;
export type MetricName = (typeof METRIC_NAMES)[number];
export type Metrics = Record<MetricName, number>;

export const METRIC_LABELS: Record<MetricName, string> = {
  recallAt5: "recall@5",
  mrrAt5: "MRR@5",
  supersession: "supersession correctness",
  abstentionPrecision: "abstention precision",
  answerableAboveTau: "answerable-above-τ",
};

/** 1-based rank of the first expected id within the top K, or null. */
export function firstExpectedRank(outcome: QueryOutcome): number | null {
  const top = outcome.ranked.slice(0, K);
  const i = top.findIndex((id) => outcome.query.expected.includes(id));
  return i < 0 ? null : i + 1;
}

/** Successor in the top K, and every predecessor either absent from it or ranked below. */
export function supersessionCorrect(outcome: QueryOutcome): boolean {
  const top = outcome.ranked.slice(0, K);
  const [successor] = outcome.query.expected;
  const at = successor === undefined ? -1 : top.indexOf(successor);
  if (at < 0) return false;
  return (outcome.query.forbidden ?? []).every((id) => {
    const p = top.indexOf(id);
    return p < 0 || p > at;
  });
}

export const mean = (xs: readonly number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);

/**
 * The five gate metrics. Answerable queries are the retrieval and supersession slices together:
 * recall@5 and MRR@5 are computed over them, as is answerable-above-τ (the share where search did
 * not abstain). Abstention precision is the share of (gated) abstention queries where search
 * abstained. Advisory queries are left out of every gate metric; see advisoryAbstention.
 */
export function computeMetrics(outcomes: readonly QueryOutcome[]): Metrics {
  const gated = outcomes.filter((o) => !o.query.advisory);
  const answerable = gated.filter((o) => o.query.slice !== "abstention");
  const supersession = gated.filter((o) => o.query.slice === "supersession");
  const abstention = gated.filter((o) => o.query.slice === "abstention");
  return {
    recallAt5: mean(answerable.map((o) => (firstExpectedRank(o) === null ? 0 : 1))),
    mrrAt5: mean(
      answerable.map((o) => {
        const rank = firstExpectedRank(o);
        return rank === null ? 0 : 1 / rank;
      }),
    ),
    supersession: mean(supersession.map((o) => (supersessionCorrect(o) ? 1 : 0))),
    abstentionPrecision: mean(abstention.map((o) => (o.abstained ? 1 : 0))),
    answerableAboveTau: mean(answerable.map((o) => (o.abstained ? 0 : 1))),
  };
}

/** Share of the advisory (near-domain) abstention queries where search abstained; null without any. */
export function advisoryAbstention(outcomes: readonly QueryOutcome[]): { abstained: number; of: number } | null {
  const advisory = outcomes.filter((o) => o.query.advisory);
  return advisory.length === 0 ? null : { abstained: advisory.filter((o) => o.abstained).length, of: advisory.length };
}

/** One line per query that misses on any metric, naming ids and ranks only (never text). */
export function describeFailures(outcomes: readonly QueryOutcome[]): string[] {
  const lines: string[] = [];
  for (const o of outcomes) {
    const top = o.ranked.slice(0, K).join(",") || "-";
    const q = o.query;
    if (q.slice === "abstention") {
      if (!o.abstained) lines.push(`${q.id} [abstention${q.advisory ? ", advisory" : ""}] did not abstain; top ${top}`);
      continue;
    }
    const problems: string[] = [];
    if (firstExpectedRank(o) === null) problems.push(`expected ${q.expected.join("|")} not in top ${K}`);
    else if (firstExpectedRank(o) !== 1) problems.push(`expected at rank ${firstExpectedRank(o)}`);
    if (q.slice === "supersession" && firstExpectedRank(o) !== null && !supersessionCorrect(o))
      problems.push(`predecessor ${q.forbidden?.join("|")} not below successor`);
    if (o.abstained) problems.push("abstained");
    if (problems.length > 0) lines.push(`${q.id} [${q.slice}] ${problems.join("; ")}; top ${top}`);
  }
  return lines;
}
