/**
 * Chooses the ranking and the abstention verdict across three data sets (`npm run eval:retrieval
 * -- --fit`): the two fixtures and LoCoMo's development half. Each data set is loaded through the
 * real memory service; each query's candidate pool is gathered once by the search service's own SQL
 * (as the search role, under RLS) and ranked offline under every trial policy. It prints, and never
 * writes: the chosen numbers go into SEARCH_POLICY by hand, and the gates then measure them through
 * the real services.
 *
 * The method (docs/evals.md, "Choosing the ranking"): start from textbook fusions that fit nothing,
 * and add a fitted number only when it beats them on the worst data set by more than that data
 * set's noise without losing on the others.
 * - Ranking: each leg alone; reciprocal-rank fusion of cosine and BM25 with k = 60 (no fitted
 *   number: the baseline); and a min-max weighted sum with one weight. A query's score is the mean
 *   of its hit (first expected memory in the top 5) and reciprocal rank; a data set's, the mean
 *   over its answerable queries. Noise is a paired bootstrap over queries.
 * - Abstention: one signal (the best cosine) or two (plus one measure of how much of the query's
 *   vocabulary is stored), each threshold put above the strongest absent-topic query of both
 *   fixtures, so abstention precision is 1; LoCoMo's questions, all answerable, count how often it
 *   abstains wrongly. The rule abstaining least on the worst data set wins; a second signal must
 *   do better than the first alone by more than one query per data set.
 */
import { SEARCH_POLICY, evidenceScore, type SearchPolicy } from "@3ngram/search";
import { computeMetrics, firstExpectedRank, mean, type QueryOutcome } from "./metrics.js";
import { outcomesUnder as outcomesOf, type QueryPools } from "./pools.js";

/** One data set's gathered pools, with its name. */
export type Pools = QueryPools & { dataSet: string };

type Outcome = ReturnType<typeof outcomesOf>[number];

interface DataSet {
  name: string;
  byTokens: Map<SearchPolicy["tokens"], Pools>;
  supersession: boolean;
  abstention: boolean;
}

/** A candidate ranking: how it is described, and the policy that ranks it. */
interface Candidate {
  label: string;
  policy: SearchPolicy;
  /** How many numbers were fitted to choose it (the baseline and the single legs: none). */
  fitted: number;
}

const f4 = (x: number) => x.toFixed(4);

/** Per answerable query: (hit@5 + reciprocal rank) / 2, the score the choice is made on. */
function queryScores(outcomes: readonly QueryOutcome[]): number[] {
  return outcomes
    .filter((o) => !o.query.advisory && o.query.slice !== "abstention")
    .map((o) => {
      const rank = firstExpectedRank(o);
      return rank === null ? 0 : (1 + 1 / rank) / 2;
    });
}

/** A small deterministic generator, so the bootstrap prints the same figures on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Standard error of the mean of paired differences (b − a), by 1,000 bootstrap resamples of the queries. */
export function pairedBootstrapSe(a: readonly number[], b: readonly number[], resamples = 1000): number {
  const diffs = a.map((x, i) => b[i]! - x);
  const random = seeded(0x3e6ea);
  const means: number[] = [];
  for (let r = 0; r < resamples; r++) {
    let sum = 0;
    for (let i = 0; i < diffs.length; i++) sum += diffs[Math.floor(random() * diffs.length)]!;
    means.push(sum / diffs.length);
  }
  const m = mean(means);
  return Math.sqrt(mean(means.map((x) => (x - m) ** 2)));
}

function candidates(): Candidate[] {
  const base: SearchPolicy = SEARCH_POLICY;
  const out: Candidate[] = [];
  for (const tokens of ["english", "memory"] as const) {
    const withTokens = { ...base, tokens };
    out.push(
      { label: `${tokens} vector only`, fitted: 0, policy: { ...withTokens, fusion: { method: "rrf", rrfK: 60 }, weights: { ...base.weights, fts: 0 } } },
      { label: `${tokens} BM25 only`, fitted: 0, policy: { ...withTokens, fusion: { method: "rrf", rrfK: 60 }, weights: { ...base.weights, vector: 0 } } },
      {
        label: `${tokens} RRF k=60`,
        fitted: 0,
        policy: { ...withTokens, fusion: { method: "rrf", rrfK: 60 }, weights: { ...base.weights, vector: 1, fts: 1 } },
      },
    );
    for (const fts of [0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2]) {
      out.push({
        label: `${tokens} min-max, lexical weight ${fts}`,
        fitted: 1,
        policy: { ...withTokens, fusion: { method: "minmax", rrfK: 60 }, weights: { ...base.weights, vector: 1, fts } },
      });
    }
  }
  return out;
}

interface Measured {
  candidate: Candidate;
  /** Per data set: the outcomes, the per-query scores and the headline metrics. */
  sets: { outcomes: Outcome[]; scores: number[]; recall: number; mrr: number; supersession: number }[];
}

function measure(sets: readonly DataSet[], candidate: Candidate): Measured {
  return {
    candidate,
    sets: sets.map((set) => {
      const outcomes = outcomesOf(set.byTokens.get(candidate.policy.tokens)!, candidate.policy);
      const m = computeMetrics(outcomes);
      return { outcomes, scores: queryScores(outcomes), recall: m.recallAt5, mrr: m.mrrAt5, supersession: m.supersession };
    }),
  };
}

/** The abstention rules tried: the best cosine alone, or plus one weighted vocabulary signal. */
type Weights = Omit<SearchPolicy["abstention"], "minEvidence" | "model">;

function abstentionRules(): { label: string; signals: number; weights: Weights }[] {
  const none = { termCoverageWeight: 0, weightedCoverageWeight: 0, topMatchWeight: 0 };
  const rules = [{ label: "best cosine", signals: 1, weights: none }];
  for (const w of [0.1, 0.2, 0.3, 0.5]) {
    rules.push({ label: `best cosine + ${w} x idf-weighted term coverage`, signals: 2, weights: { ...none, weightedCoverageWeight: w } });
    rules.push({ label: `best cosine + ${w} x top hit's idf share`, signals: 2, weights: { ...none, topMatchWeight: w } });
    rules.push({ label: `best cosine + ${w} x term coverage`, signals: 2, weights: { ...none, termCoverageWeight: w } });
  }
  return rules;
}

interface Verdict {
  label: string;
  signals: number;
  weights: Weights;
  threshold: number;
  /** Per data set: answerable queries abstained, and how many answerable there are. */
  abstained: { wrong: number; of: number }[];
  worstRate: number;
}

/**
 * The threshold sits halfway between the strongest gated absent-topic query and the next
 * answerable query above it (over every data set), so every absent topic abstains.
 */
function calibrateRule(outcomes: readonly Outcome[][], rule: ReturnType<typeof abstentionRules>[number]): Verdict {
  // evidenceScore scales a sum up to its full weight; the verdict compares the plain sum.
  const total = 1 + Object.values(rule.weights).reduce((a, b) => a + b, 0);
  const score = (o: Outcome) => (evidenceScore(o.full, rule.weights) ?? 0) / total;
  const absent = outcomes.flatMap((set) => set.filter((o) => !o.query.advisory && o.query.slice === "abstention").map(score));
  const answerable = outcomes.map((set) => set.filter((o) => !o.query.advisory && o.query.slice !== "abstention").map(score));
  const strongestAbsent = Math.max(...absent);
  const above = answerable.flat().filter((x) => x > strongestAbsent);
  const next = above.length > 0 ? Math.min(...above) : strongestAbsent + 0.01;
  const threshold = Number(((strongestAbsent + next) / 2).toFixed(4));
  const abstained = answerable.map((xs) => ({ wrong: xs.filter((x) => x < threshold).length, of: xs.length }));
  return { ...rule, threshold, abstained, worstRate: Math.max(...abstained.map((a) => a.wrong / a.of)) };
}

/** Prints the choice over the gathered pools (run.ts gathers them); answers the exit code. */
export function fitPolicy(gathered: readonly Pools[]): number {
  const names = [...new Set(gathered.map((p) => p.dataSet))];
  const sets: DataSet[] = names.map((name) => {
    const byTokens = new Map(gathered.filter((p) => p.dataSet === name).map((p) => [p.tokens, p]));
    const any = byTokens.values().next().value!;
    const has = (slice: string) => any.fixture.queries.some((q) => q.slice === slice);
    return { name, byTokens, supersession: has("supersession"), abstention: has("abstention") };
  });

  // ---- ranking ----
  const measured = candidates().map((c) => measure(sets, c));
  console.log(`ranking: recall@5 / MRR@5 per data set (${sets.map((s) => s.name).join(", ")}); supersession must stay 1 on the fixtures\n`);
  for (const m of measured) {
    const cells = m.sets.map(
      (s, i) => `${f4(s.recall)} / ${f4(s.mrr)}${sets[i]!.supersession && s.supersession < 1 ? ` (supersession ${f4(s.supersession)})` : ""}`,
    );
    console.log(`  ${m.candidate.label.padEnd(40)} ${cells.join("   ")}`);
  }

  const eligible = (m: Measured) => m.sets.every((s, i) => !sets[i]!.supersession || s.supersession === 1);
  // The worst data set is the one with the lowest score under the baseline.
  const baselines = measured.filter((m) => m.candidate.label.endsWith("RRF k=60"));
  const baseline = [...baselines].sort((a, b) => Math.min(...b.sets.map((s) => mean(s.scores))) - Math.min(...a.sets.map((s) => mean(s.scores))))[0]!;
  const worst = baseline.sets.reduce((w, s, i) => (mean(s.scores) < mean(baseline.sets[w]!.scores) ? i : w), 0);
  console.log(`\nbaseline: ${baseline.candidate.label} (no fitted number); worst data set under it: ${sets[worst]!.name}`);
  console.log(`each candidate against it: difference in mean query score per data set ± its bootstrap standard error\n`);
  let chosen = baseline;
  let chosenGain = 0;
  for (const m of measured) {
    if (m === baseline || !eligible(m)) continue;
    const diffs = m.sets.map((s, i) => ({ gain: mean(s.scores) - mean(baseline.sets[i]!.scores), se: pairedBootstrapSe(baseline.sets[i]!.scores, s.scores) }));
    const winsWorst = diffs[worst]!.gain > 2 * diffs[worst]!.se;
    const losesNone = diffs.every((d) => d.gain > -2 * d.se);
    const verdict = winsWorst && losesNone ? "WINS" : "";
    console.log(
      `  ${m.candidate.label.padEnd(40)} ${diffs.map((d, i) => `${sets[i]!.name} ${d.gain >= 0 ? "+" : ""}${f4(d.gain)} ± ${f4(d.se)}`).join("   ")} ${verdict}`,
    );
    if (verdict && diffs[worst]!.gain > chosenGain) {
      chosen = m;
      chosenGain = diffs[worst]!.gain;
    }
  }
  console.log(`\nchosen ranking: ${chosen.candidate.label} (${chosen.candidate.fitted} fitted number${chosen.candidate.fitted === 1 ? "" : "s"})`);
  // Keyword lookups (queries of at most two words) fused by reciprocal rank, or like every query.
  for (const shortQueryFusion of ["rrf", "same"] as const) {
    const m = measure(sets, { ...chosen.candidate, policy: { ...chosen.candidate.policy, shortQueryFusion } });
    console.log(
      `  short queries fused ${shortQueryFusion === "rrf" ? "by RRF" : "the same way"}: ${m.sets.map((s, i) => `${sets[i]!.name} ${f4(s.recall)} / ${f4(s.mrr)}`).join("   ")}`,
    );
  }

  // ---- abstention, for the chosen ranking ----
  const outcomes = chosen.sets.map((s) => s.outcomes);
  const verdicts = abstentionRules().map((rule) => calibrateRule(outcomes, rule));
  console.log(`\nabstention rules (precision 1 on every fixture's gated absent topics): answerable queries abstained per data set`);
  for (const v of verdicts) {
    console.log(
      `  ${v.label.padEnd(46)} below ${v.threshold.toFixed(4)}: ${v.abstained.map((a, i) => `${sets[i]!.name} ${a.wrong}/${a.of} (${((100 * a.wrong) / a.of).toFixed(1)} %)`).join(", ")}`,
    );
  }
  const single = verdicts.find((v) => v.signals === 1)!;
  const better = (a: Verdict, b: Verdict) => a.worstRate - b.worstRate;
  const bestPair = verdicts.filter((v) => v.signals === 2).sort(better)[0]!;
  // A second signal must abstain wrongly on fewer queries on every data set, by more than one on the worst.
  const pairWins =
    bestPair.abstained.every((a, i) => a.wrong <= single.abstained[i]!.wrong) &&
    bestPair.worstRate < single.worstRate - Math.max(...single.abstained.map((a) => 1 / a.of));
  const verdict = pairWins ? bestPair : single;
  console.log(`\nchosen verdict: ${verdict.label}, abstain below ${verdict.threshold}`);
  const model = sets[0]!.byTokens.values().next().value!.model;
  const policy: SearchPolicy = {
    ...chosen.candidate.policy,
    abstention: { model, minEvidence: verdict.threshold * (1 + Object.values(verdict.weights).reduce((a, b) => a + b, 0)), ...verdict.weights },
  };
  console.log(
    `SEARCH_POLICY numbers: ${JSON.stringify({ tokens: policy.tokens, weights: policy.weights, fusion: policy.fusion, abstention: policy.abstention })}`,
  );
  return 0;
}
