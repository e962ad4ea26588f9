/**
 * Passage-level vectors, measured before anything is built (`npm run eval:passages`).
 *
 * The question (issue 12): one vector per memory blurs a long memory, so would a vector per
 * passage (the topic with one sentence of the content) find what the whole-memory vector misses,
 * and would "the closest passage" separate "not stored" from "found" better than the closest memory?
 *
 * What it measures is the design that costs least on the search path: the candidate pool is
 * gathered exactly as today (whole-memory HNSW, full text, recency; the search service's own SQL,
 * as the search role), and each pooled memory's cosine is then replaced by
 * max(whole-memory cosine, best passage cosine). Membership does not change, only the scores, so the
 * result is what a column of passage vectors read for the pooled rows would give, without a
 * migration. Ranking and evidence go through the search service's own `rank` and
 * `abstentionEvidence` (pools.ts), and the verdict is calibrated on both fixtures together by the
 * fit's own procedure (fit.ts).
 *
 * EVAL_FIT_POOLS=<file> keeps the gathered pools, shared with `--fit` (run.ts gatherAllPools).
 */
import { createEmbedder, memoryEmbeddingText, parseEmbeddingsConfig, type Embedder } from "@3ngram/embeddings";
import { SEARCH_POLICY, normaliseQuery, type CandidateRow, type SearchPolicy } from "@3ngram/search";
import { calibrate, type Pools } from "./fit.js";
import { computeMetrics, describeFailures, firstExpectedRank, type Metrics } from "./metrics.js";
import { outcomesUnder, type QueryPools } from "./pools.js";
import { VARIANTS, gatherAllPools, variantPolicy } from "./run.js";

/** A memory's passages: its sentences (and lines), each read with the topic in front. */
export function passagesOf(memory: { topic: string; content: string }): string[] {
  const sentences = memory.content
    .split(/(?<=[.!?;:])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  // One sentence: the passage is the whole memory, whose vector is already stored.
  if (sentences.length < 2) return [];
  return sentences.map((s) => memoryEmbeddingText({ topic: memory.topic, content: s }));
}

const dot = (a: readonly number[], b: readonly number[]) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

async function embedAll(embedder: Embedder, texts: readonly string[]): Promise<number[][]> {
  const out: number[][] = [];
  for (let at = 0; at < texts.length; at += 32) out.push(...(await embedder.embed(texts.slice(at, at + 32))));
  return out;
}

type Mode = "whole" | "passage";

/** The fixture's pools with each pooled memory's cosine replaced by max(whole, best passage). */
export async function withPassages(embedder: Embedder, p: QueryPools): Promise<QueryPools> {
  const byId = new Map(p.fixture.memories.map((m) => [m.id, m]));
  const passageVectors = new Map<string, number[][]>();
  for (const m of p.fixture.memories) {
    const texts = passagesOf(m);
    if (texts.length > 0) passageVectors.set(m.id, await embedAll(embedder, texts));
  }
  const queryVectors = await embedAll(
    embedder,
    p.fixture.queries.map((q) => normaliseQuery(q.query)),
  );
  const pools: CandidateRow[][] = p.pools.map((pool, i) =>
    pool.map((row) => {
      const fixtureId = p.fixtureIdOf.get(row.id);
      const vectors = fixtureId !== undefined && byId.has(fixtureId) ? passageVectors.get(fixtureId) : undefined;
      if (row.cosine === null || !vectors) return row;
      const best = Math.max(...vectors.map((v) => dot(queryVectors[i]!, v)));
      return { ...row, cosine: Math.max(row.cosine, best) };
    }),
  );
  return { ...p, pools };
}

const f4 = (x: number) => x.toFixed(4);
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

export async function main(): Promise<number> {
  const embedder = await createEmbedder(parseEmbeddingsConfig({ EMBEDDINGS_PROVIDER: "local" }), { warmup: true });
  const gathered = await gatherAllPools(embedder);
  const policy = SEARCH_POLICY;
  const whole = gathered.filter((p) => p.tokens === policy.tokens);
  const byMode: Record<Mode, Pools[]> = { whole, passage: [] };
  for (const p of whole) byMode.passage.push({ ...(await withPassages(embedder, p)), fixture_: p.fixture_ });
  const passageCount = whole.map((p) => `${p.fixture_} ${p.fixture.memories.reduce((n, m) => n + passagesOf(m).length, 0)}`).join(", ");
  console.log(`passages (topic + one sentence, memories of two sentences or more): ${passageCount}`);

  for (const mode of ["whole", "passage"] as const) {
    console.log(`\n== cosine: ${mode === "whole" ? "whole memory (today)" : "max(whole memory, best passage)"}`);
    for (const fts of [...new Set([policy.weights.fts, 0.35, 0.5])]) {
      const trial: SearchPolicy = { ...policy, weights: { ...policy.weights, fts } };
      for (const p of byMode[mode]) {
        const m = Object.fromEntries(VARIANTS.map((v) => [v, computeMetrics(outcomesUnder(p, variantPolicy(trial, v)))])) as Record<string, Metrics>;
        const beats = (["vector", "lexical"] as const).every((leg) => m.fused!.recallAt5 > m[leg]!.recallAt5 && m.fused!.mrrAt5 > m[leg]!.mrrAt5);
        console.log(
          `  lexical ${fts} ${p.fixture_}: ` +
            VARIANTS.map((v) => `${v} R@5 ${f4(m[v]!.recallAt5)} MRR ${f4(m[v]!.mrrAt5)}${v === "lexical" ? "" : ` sup ${f4(m[v]!.supersession)}`}`).join(
              "; ",
            ) +
            `; fused beats each leg: ${beats ? "yes" : "no"}`,
        );
      }
    }
    // Abstention: the committed verdict as it is, then one calibrated on both fixtures together.
    const fused = byMode[mode].map((p) => outcomesUnder(p, policy));
    for (const [i, p] of byMode[mode].entries()) {
      const m = computeMetrics(fused[i]!);
      const misses = describeFailures(fused[i]!).filter((l) => / not in top 5/.test(l) || /\[abstention\] did not/.test(l));
      console.log(
        `  committed verdict, ${p.fixture_}: abstention ${f4(m.abstentionPrecision)} answerable-above-τ ${f4(m.answerableAboveTau)}; misses: ${misses.map((l) => l.split(" ")[0]).join(", ") || "none"}`,
      );
      // Cosine alone: answerable queries whose best cosine is no higher than the strongest absent topic's.
      const gated = fused[i]!.filter((o) => !o.query.advisory);
      const absent = Math.max(...gated.filter((o) => o.query.slice === "abstention").map((o) => o.full.bestCosine ?? 0));
      const answerable = gated.filter((o) => o.query.slice !== "abstention");
      const under = answerable.filter((o) => (o.full.bestCosine ?? 0) <= absent).length;
      console.log(
        `    best cosine alone: strongest absent ${absent.toFixed(3)}; answerable at or below it ${under}/${answerable.length} (${pct(under / answerable.length)})`,
      );
    }
    const verdict = calibrate(fused);
    console.log(
      `  verdict calibrated on both fixtures: abstain below ${verdict.threshold} with ${JSON.stringify(verdict.weights)}; ` +
        `worst fixture's answerable abstained ${pct(verdict.worstAbstained)} (bound 3%)`,
    );
    const calibrated = (v: typeof verdict): SearchPolicy => ({ ...policy, abstention: { minEvidence: v.threshold, ...v.weights } });
    for (const p of byMode[mode]) {
      const abstained = outcomesUnder(p, calibrated(verdict)).filter((o) => !o.query.advisory && o.query.slice !== "abstention" && o.abstained);
      console.log(`    ${p.fixture_}: answerable abstained ${abstained.length}: ${abstained.map((o) => o.query.id).join(", ")}`);
    }
    // The committed verdict's procedure (calibrated on one fixture), so the floors it holds can be compared.
    for (const [i, p] of byMode[mode].entries()) {
      const alone = calibrate([fused[i]!]);
      const measured = byMode[mode].map((q) => {
        const m = computeMetrics(outcomesUnder(q, calibrated(alone)));
        return `${q.fixture_} abstention ${f4(m.abstentionPrecision)} answerable-above-τ ${f4(m.answerableAboveTau)}`;
      });
      console.log(`  verdict calibrated on ${p.fixture_} alone (below ${alone.threshold}): ${measured.join("; ")}`);
    }
  }
  // Which answerable queries moved, fused and vector only (rank of the first expected hit; "-" outside the top 5).
  for (const variant of ["fused", "vector"] as const) {
    for (const [i, p] of whole.entries()) {
      const rankOf = (pools: QueryPools) =>
        outcomesUnder(pools, variantPolicy(policy, variant)).map((o) => (o.query.slice === "abstention" ? null : (firstExpectedRank(o) ?? "-")));
      const before = rankOf(p);
      const after = rankOf(byMode.passage[i]!);
      const moved = p.fixture.queries.flatMap((q, j) => (before[j] !== after[j] ? [`${q.id} ${before[j]}→${after[j]}`] : []));
      console.log(`\n${variant}, ${p.fixture_}: ranks that moved with passages: ${moved.join(", ") || "none"}`);
    }
  }
  await embedder.close?.();
  return 0;
}
