/**
 * Fits the ranking's fusion and the abstention verdict across the fixtures (`npm run
 * eval:retrieval -- --fit`). Each fixture is loaded through the real memory service; each query's
 * candidate pool is gathered once by the search service's own SQL (as the search role, under RLS)
 * and then ranked offline under every trial policy, which makes a grid of hundreds of policies
 * take seconds. It prints, and never writes: the chosen numbers go into SEARCH_POLICY by hand,
 * and the gate (run.ts) then measures them through the real services.
 *
 * Selection (docs/evals.md): a ranking policy's score on a fixture is the mean of recall@5 and
 * MRR@5 (supersession must stay perfect); the chosen policy maximises the WORSE fixture's score.
 * Leave-one-fixture-out cross-validation reports how a policy fitted on one fixture alone does on
 * the others, which is the honest estimate of how the choice transfers to text we did not write.
 * Abstention is then calibrated on every fixture together for the chosen ranking. The data sets
 * are the two fixtures and LoCoMo's development half (eval/locomo), whose questions are retrieval
 * queries expecting their evidence turns: it has no supersession or abstention queries.
 */
import { SEARCH_POLICY, evidenceScore, type SearchPolicy } from "@3ngram/search";
import { computeMetrics, type Metrics } from "./metrics.js";
import { outcomesUnder as outcomesOf, type QueryPools } from "./pools.js";

/** The lexical forms the fit compares: which vector is searched, and how its matches are scored. */
const LEXICAL_FORMS = [
  ["english", "ts_rank"],
  ["english", "bm25"],
  ["memory", "ts_rank"],
  ["memory", "bm25"],
] as const;

/** One fixture's gathered pools, with its name. */
export type Pools = QueryPools & { fixture_: string };

/** A ranking policy's score on one fixture: mean of recall@5 and MRR@5; −1 if supersession slips (on a fixture that has any). */
function rankingScore(m: Metrics, hasSupersession: boolean): number {
  return hasSupersession && m.supersession < 1 ? -1 : (m.recallAt5 + m.mrrAt5) / 2;
}

/** Whether a fixture has queries of a slice (LoCoMo has retrieval queries only). */
const hasSlice = (p: QueryPools, slice: string) => p.fixture.queries.some((q) => q.slice === slice);

/** Every ranking policy the fit tries: lexical score, fusion method, lexical weight, recency, topic bonus. */
function rankingGrid(): SearchPolicy[] {
  const grid: SearchPolicy[] = [];
  const fusions: SearchPolicy["fusion"][] = [
    { method: "score", rrfK: 60 },
    { method: "minmax", rrfK: 60 },
    { method: "rank", rrfK: 60 },
    ...[5, 20, 60].map((rrfK) => ({ method: "rrf" as const, rrfK })),
  ];
  for (const [tokens, lexicalScore] of LEXICAL_FORMS) {
    for (const fusion of fusions) {
      for (const fts of [0.2, 0.35, 0.5, 1, 1.5]) {
        for (const recency of [0, 0.05]) {
          for (const bonus of [0, 0.5]) {
            grid.push({
              ...SEARCH_POLICY,
              tokens,
              lexicalScore,
              fusion,
              weights: { vector: 1, fts, recency },
              topicMatch: { ...SEARCH_POLICY.topicMatch, bonus },
            });
          }
        }
      }
    }
  }
  return grid;
}

export type Verdict = { weights: Omit<SearchPolicy["abstention"], "minEvidence">; threshold: number; margin: number; worstAbstained: number };
type Outcomes = ReturnType<typeof outcomesOf>;

/**
 * The abstention verdict for one ranking, calibrated on every fixture together: for each signal
 * weighting, the threshold sits above the strongest absent-topic query (precision 1 on every
 * fixture), halfway to the next answerable one; the weighting with the fewest answerable queries
 * abstained on the worse fixture wins, then the widest margin (relative to the threshold).
 */
export function calibrate(outcomes: readonly Outcomes[]): Verdict {
  let best: Verdict | null = null;
  for (const termCoverageWeight of [0, 0.5, 1, 2]) {
    for (const scoreGapWeight of [0, 0.5, 1, 2, 4]) {
      for (const weightedCoverageWeight of [0, 1, 2, 3]) {
        for (const topMatchWeight of [0, 1, 2]) {
          for (const cosineLiftWeight of [0, 1, 2, 4]) {
            const weights = { termCoverageWeight, scoreGapWeight, weightedCoverageWeight, topMatchWeight, cosineLiftWeight };
            const sums = outcomes.map((fixture) => {
              const gated = fixture.filter((o) => !o.query.advisory);
              const score = (o: Outcomes[number]) => evidenceScore(o.full, weights) ?? 0;
              return {
                absent: gated.filter((o) => o.query.slice === "abstention").map(score),
                answerable: gated.filter((o) => o.query.slice !== "abstention").map(score),
              };
            });
            const strongestAbsent = Math.max(...sums.flatMap((s) => s.absent));
            const above = sums.flatMap((s) => s.answerable).filter((x) => x > strongestAbsent);
            const next = above.length > 0 ? Math.min(...above) : strongestAbsent + 0.02;
            const threshold = Number(((strongestAbsent + next) / 2).toFixed(4));
            const worstAbstained = Math.max(...sums.map((s) => s.answerable.filter((x) => x < threshold).length / s.answerable.length));
            const margin = (next - strongestAbsent) / Math.max(threshold, 1e-9);
            const choice = { weights, threshold, margin, worstAbstained };
            if (!best || worstAbstained < best.worstAbstained - 1e-9 || (Math.abs(worstAbstained - best.worstAbstained) < 1e-9 && margin > best.margin))
              best = choice;
          }
        }
      }
    }
  }
  return best!;
}

/** The issue's bound on answerable queries wrongly abstained, per fixture. */
const MAX_ABSTAINED = 0.03;
/** How many of the best rankings get their abstention calibrated. */
const CALIBRATED = 40;
/** Answerable queries listed below the verdict's threshold, per fixture. */
const MAX_LISTED = 20;

const describe = (p: SearchPolicy) =>
  `${p.tokens}/${p.lexicalScore} ${p.fusion.method}${p.fusion.method === "rrf" ? `(k ${p.fusion.rrfK})` : ""} lexical ${p.weights.fts} recency ${p.weights.recency} topic ${p.topicMatch.bonus}`;
const f4 = (x: number) => x.toFixed(4);

/** Prints the fit over the fixtures' gathered pools (run.ts gathers them); answers the exit code. */
export function fitPolicy(gathered: readonly Pools[]): number {
  // One entry per fixture, holding its pools for each full-text vector.
  const names = [...new Set(gathered.map((p) => p.fixture_))];
  const all = names.map((name) => {
    const byTokens = new Map(gathered.filter((p) => p.fixture_ === name).map((p) => [p.tokens, p]));
    const any = byTokens.values().next().value!;
    return { fixture_: name, byTokens, supersession: hasSlice(any, "supersession"), abstention: hasSlice(any, "abstention") };
  });
  const outcomesUnder = (f: (typeof all)[number], policy: SearchPolicy) => outcomesOf(f.byTokens.get(policy.tokens)!, policy);
  // ---- ranking: maximin over fixtures, with leave-one-fixture-out cross-validation ----
  const grid = rankingGrid();
  const ranked = grid
    .map((policy) => {
      const outcomes = all.map((p) => outcomesUnder(p, policy));
      const metrics = outcomes.map(computeMetrics);
      const scores = metrics.map((m, i) => rankingScore(m, all[i]!.supersession));
      return { policy, outcomes, metrics, scores, worst: Math.min(...scores) };
    })
    .sort((a, b) => b.worst - a.worst);
  // Calibrating abstention is the slow part: only the rankings in the top CALIBRATED by the worse
  // fixture's score are calibrated (the rest keep an infeasible verdict).
  const scored = ranked.map((r, i) => {
    const verdict: Verdict = i < CALIBRATED ? calibrate(r.outcomes) : { weights: SEARCH_POLICY.abstention, threshold: 0, margin: 0, worstAbstained: 1 };
    return { ...r, verdict, feasible: verdict.worstAbstained <= MAX_ABSTAINED };
  });
  // A ranking whose abstention can meet the bound beats one that cannot; then the worse fixture's
  // score; ties go to the better mean, then to the earlier (simpler) grid entry.
  const better = (a: (typeof scored)[number], b: (typeof scored)[number]) =>
    Number(b.feasible) - Number(a.feasible) || b.worst - a.worst || b.scores.reduce((x, y) => x + y, 0) - a.scores.reduce((x, y) => x + y, 0);
  const chosen = [...scored].sort(better)[0]!;

  console.log(`ranking grid: ${grid.length} policies over ${all.length} fixtures (score = mean of recall@5 and MRR@5; supersession must be 1)\n`);
  console.log("leave-one-fixture-out: fitted on one fixture, measured on each other one");
  for (const [i, p] of all.entries()) {
    const bestHere = [...scored].sort((a, b) => b.scores[i]! - a.scores[i]!)[0]!;
    for (const [j, q] of all.entries()) {
      if (i === j) continue;
      console.log(
        `  fit on ${p.fixture_}: ${describe(bestHere.policy)} -> ${p.fixture_} ${f4(bestHere.scores[i]!)}, held-out ${q.fixture_} ${f4(bestHere.scores[j]!)} (recall@5 ${f4(bestHere.metrics[j]!.recallAt5)}, MRR@5 ${f4(bestHere.metrics[j]!.mrrAt5)})`,
      );
    }
  }
  console.log(`\nbest per fusion method (maximin):`);
  for (const [tokens, lexicalScore] of LEXICAL_FORMS) {
    for (const method of ["score", "minmax", "rank", "rrf"] as const) {
      const best = scored
        .filter((s) => s.policy.fusion.method === method && s.policy.lexicalScore === lexicalScore && s.policy.tokens === tokens)
        .sort(better)[0]!;
      console.log(
        `  ${describe(best.policy)}: ${all.map((p, i) => `${p.fixture_} R@5 ${f4(best.metrics[i]!.recallAt5)} MRR ${f4(best.metrics[i]!.mrrAt5)}`).join("; ")}; ` +
          `abstained ≤ ${(best.verdict.worstAbstained * 100).toFixed(1)}%`,
      );
    }
  }
  console.log(`\nchosen (maximin): ${describe(chosen.policy)}`);

  // ---- abstention: calibrated on every fixture together for the chosen ranking ----
  const best = chosen.verdict;
  console.log(
    `abstention (every fixture): abstain below ${best!.threshold} with weights ${JSON.stringify(best!.weights)}; ` +
      `margin ${best!.margin.toFixed(3)}, worst fixture's answerable abstained ${(best!.worstAbstained * 100).toFixed(1)}%`,
  );
  const final: SearchPolicy = { ...chosen.policy, abstention: { minEvidence: best!.threshold, ...best!.weights } };
  // Cross-validation of the verdict: calibrated on one fixture alone, measured on each (a fixture
  // without absent topics has nothing to calibrate on alone).
  for (const [i, p] of all.entries()) {
    if (!p.abstention) continue;
    const alone = calibrate([chosen.outcomes[i]!]);
    const trial: SearchPolicy = { ...chosen.policy, abstention: { minEvidence: alone.threshold, ...alone.weights } };
    const measured = all.map((q) => {
      const m = computeMetrics(outcomesUnder(q, trial));
      return `${q.fixture_}${q.abstention ? ` abstention ${f4(m.abstentionPrecision)}` : ""} answerable-above-τ ${f4(m.answerableAboveTau)}`;
    });
    console.log(`  verdict calibrated on ${p.fixture_} alone (below ${alone.threshold}, ${JSON.stringify(alone.weights)}): ${measured.join("; ")}`);
  }
  // Where the verdict is tight: the strongest absent-topic queries and the answerable ones below it.
  for (const [i, p] of all.entries()) {
    const rows = chosen.outcomes[i]!.filter((o) => !o.query.advisory).map((o) => ({
      id: o.query.id,
      slice: o.query.slice,
      score: evidenceScore(o.full, best!.weights) ?? 0,
    }));
    const absent = rows
      .filter((r) => r.slice === "abstention")
      .sort((a, b) => b.score - a.score)
      .slice(0, 3);
    const low = rows.filter((r) => r.slice !== "abstention" && r.score < best!.threshold).sort((a, b) => a.score - b.score);
    // LoCoMo can have hundreds below: the weakest are enough to see where the verdict bites.
    const listed = low.slice(0, MAX_LISTED).map((r) => `${r.id} ${r.score.toFixed(3)}`);
    if (low.length > MAX_LISTED) listed.push(`… ${low.length} in all`);
    console.log(
      `  ${p.fixture_}: strongest absent ${absent.map((r) => `${r.id} ${r.score.toFixed(3)}`).join(", ") || "none"}; answerable below: ${listed.join(", ") || "none"}`,
    );
  }
  console.log(`\nwith that verdict (offline ranking of the gathered pools):`);
  for (const p of all) {
    const m = computeMetrics(outcomesUnder(p, final));
    console.log(
      `  ${p.fixture_}: recall@5 ${f4(m.recallAt5)} MRR@5 ${f4(m.mrrAt5)}${p.supersession ? ` supersession ${f4(m.supersession)}` : ""}` +
        `${p.abstention ? ` abstention ${f4(m.abstentionPrecision)}` : ""} answerable-above-τ ${f4(m.answerableAboveTau)}`,
    );
  }
  console.log(
    `\nSEARCH_POLICY numbers: ${JSON.stringify({ weights: final.weights, fusion: final.fusion, topicMatch: final.topicMatch, abstention: final.abstention })}`,
  );
  return 0;
}
